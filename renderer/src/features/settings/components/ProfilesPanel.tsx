import { useId, useState } from 'react';
import type { Profile } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import { keyBackendLabel, maskedKey } from '../../../stores/settings/selectors.ts';
import '../settings.css';

function KeyEditor({ profile }: { profile: Profile }) {
  const id = useId();
  const [value, setValue] = useState('');
  const [editing, setEditing] = useState(false);
  const saving = useSettings((s) => s.savingKey);
  const setKey = useSettings((s) => s.setKey);
  const removeKey = useSettings((s) => s.removeKey);
  const { key } = profile;
  const save = async () => {
    const ok = await setKey(profile.id, value.trim());
    // The field is cleared either way on success: the key is never shown again.
    if (ok) {
      setValue('');
      setEditing(false);
    }
  };
  return (
    <div className="field" aria-label={`API key of ${profile.name}`} role="group">
      <div className="field-label">
        <span>API key</span>
        <span className={`badge ${key.backend === 'none' ? 'badge-danger' : 'badge-success'}`} title={key.message}>
          {keyBackendLabel(key.backend)}
        </span>
      </div>
      {key.message && <p className="field-help">{key.message}</p>}
      {key.backend === 'none' && !key.hasKey ? null : key.hasKey && !editing ? (
        <div className="row">
          <span className="mono grow" aria-label="Stored key">
            {maskedKey(key.last4)}
          </span>
          <button type="button" className="btn btn-small" onClick={() => setEditing(true)}>
            Replace key
          </button>
          <button type="button" className="btn btn-small btn-danger" onClick={() => void removeKey(profile.id)}>
            Remove key
          </button>
        </div>
      ) : (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (value.trim()) void save();
          }}
        >
          <label className="visually-hidden" htmlFor={id}>
            {key.hasKey ? 'New API key' : 'API key'}
          </label>
          <input
            id={id}
            className="input grow"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder={key.hasKey ? 'Paste the new key' : 'Paste your API key'}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
          <button type="submit" className="btn btn-primary btn-small" disabled={!value.trim() || saving}>
            {saving ? 'Saving…' : 'Save key'}
          </button>
          {editing && (
            <button
              type="button"
              className="btn btn-ghost btn-small"
              onClick={() => {
                setEditing(false);
                setValue('');
              }}
            >
              Cancel
            </button>
          )}
        </form>
      )}
      {key.backend !== 'none' && (
        <p className="field-help">
          Stored by the app in{' '}
          {key.backend === 'keychain' ? 'your OS keychain' : keyBackendLabel(key.backend).toLowerCase()}; it is never
          shown again.
        </p>
      )}
    </div>
  );
}

function AddProfile() {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('https://');
  const createProfile = useSettings((s) => s.createProfile);
  if (!open) {
    return (
      <button type="button" className="btn btn-small" onClick={() => setOpen(true)}>
        Add a remote service
      </button>
    );
  }
  return (
    <form
      className="panel"
      style={{ background: 'var(--bg-input)' }}
      aria-label="New profile"
      onSubmit={(e) => {
        e.preventDefault();
        void createProfile({ name, baseUrl }).then((ok) => ok && setOpen(false));
      }}
    >
      <label className="field">
        <span className="field-label">Profile name</span>
        <input className="input" id={`${id}-n`} value={name} onChange={(e) => setName(e.target.value)} required />
      </label>
      <label className="field">
        <span className="field-label">Base URL</span>
        <input
          className="input"
          type="url"
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
          required
          placeholder="https://api.example.com/v1"
        />
        <span className="field-help">Ends in /v1. The key is added after the profile is created.</span>
      </label>
      <div className="row">
        <button type="submit" className="btn btn-primary btn-small">
          Add profile
        </button>
        <button type="button" className="btn btn-ghost btn-small" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ProfilesPanel() {
  const { activeId, profiles } = useSettings((s) => s.profiles);
  const activate = useSettings((s) => s.activateProfile);
  const remove = useSettings((s) => s.removeProfile);
  return (
    <section className="panel" aria-labelledby="profiles-h">
      <h3 id="profiles-h">Profiles</h3>
      {profiles.length === 0 && <p className="faint">No profiles yet.</p>}
      {profiles.map((p) => {
        const active = p.id === activeId;
        return (
          <div
            key={p.id}
            className={`profile${active ? ' active' : ''}`}
            role="group"
            aria-label={`Profile ${p.name}`}
            style={{ flexDirection: 'column', alignItems: 'stretch' }}
          >
            <div className="row">
              <div className="grow">
                <div style={{ fontWeight: 600 }}>
                  {p.name} {active && <span className="badge badge-accent">Active</span>}
                </div>
                <div className="faint mono">
                  {p.kind === 'local' ? `Built-in, offline${p.baseUrl ? ` · ${p.baseUrl}` : ''}` : p.baseUrl}
                </div>
              </div>
              {!active && (
                <button type="button" className="btn btn-small" onClick={() => void activate(p.id)}>
                  Use {p.name}
                </button>
              )}
              {p.kind === 'remote' && !active && (
                <button
                  type="button"
                  className="btn btn-small btn-ghost"
                  aria-label={`Remove profile ${p.name}`}
                  onClick={() => void remove(p.id)}
                >
                  Remove
                </button>
              )}
            </div>
            {p.kind === 'remote' ? (
              <KeyEditor profile={p} />
            ) : (
              <p className="field-help key-note">No API key needed: the Local engine runs on this computer.</p>
            )}
          </div>
        );
      })}
      <AddProfile />
    </section>
  );
}
