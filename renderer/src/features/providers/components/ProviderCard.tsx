import { useId, useState } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import type { ProviderEntry, ProviderKeyId } from '../../../../../shared/ipc/index.ts';
import { providerKeyProblem } from '../../../../../shared/ipc/provider-rules.ts';
import { useProviders } from '../store/index.ts';
import { healthBadge, maskedLast4, providerOffers } from '../store/selectors.ts';

/** How many of a provider's models are named before "+N more". */
const OFFERS_SHOWN = 6;

function Offers({ provider, catalog }: { provider: ProviderEntry; catalog: readonly ModelRecord[] }) {
  const [all, setAll] = useState(false);
  const offers = providerOffers(provider, catalog);
  if (offers.length === 0) return <p className="faint provider-offers">No models listed.</p>;
  const shown = all ? offers : offers.slice(0, OFFERS_SHOWN);
  return (
    <ul className="provider-offers" aria-label={`Models on ${provider.name}`}>
      {shown.map((o) => (
        <li key={o.model} className="offer-chip">
          {o.name}
          {o.price && <span className="offer-price">{o.price}</span>}
        </li>
      ))}
      {offers.length > OFFERS_SHOWN && (
        <li>
          <button type="button" className="btn btn-ghost btn-small" onClick={() => setAll(!all)}>
            {all ? 'Fewer' : `+${offers.length - OFFERS_SHOWN} more`}
          </button>
        </li>
      )}
    </ul>
  );
}

function KeyField({ provider }: { provider: ProviderEntry }) {
  const id = useId();
  const pid = provider.id as ProviderKeyId;
  const [value, setValue] = useState('');
  const [editing, setEditing] = useState(false);
  const busy = useProviders((s) => s.busy[pid]);
  const savedError = useProviders((s) => s.keyErrors[pid]);
  const test = useProviders((s) => s.tests[pid]);
  const { setKey, removeKey, testKey, clearKeyError } = useProviders.getState();
  // Whitespace is reported as soon as it is pasted; the other checks when saving.
  const error = (/\s/.test(value) ? providerKeyProblem(value) : null) ?? savedError;
  const save = async () => {
    // The field is cleared once saved: the key is never shown again.
    if (await setKey(pid, value)) {
      setValue('');
      setEditing(false);
    }
  };
  const showForm = !provider.configured || editing;
  return (
    <div className="provider-key">
      {showForm ? (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (value) void save();
          }}
        >
          <label className="visually-hidden" htmlFor={id}>
            {provider.configured ? `New ${provider.name} API key` : `${provider.name} API key`}
          </label>
          <input
            id={id}
            className="input grow"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder={`Paste your ${provider.name} API key`}
            value={value}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
            onChange={(e) => {
              setValue(e.target.value);
              if (savedError) clearKeyError(pid);
            }}
          />
          <button type="submit" className="btn btn-primary btn-small" disabled={!value || busy === 'saving'}>
            {busy === 'saving' ? 'Saving…' : 'Save key'}
          </button>
          {editing && (
            <button
              type="button"
              className="btn btn-ghost btn-small"
              onClick={() => {
                setEditing(false);
                setValue('');
                clearKeyError(pid);
              }}
            >
              Cancel
            </button>
          )}
        </form>
      ) : (
        <div className="row">
          <span className="mono grow" aria-label={`Stored ${provider.name} key`}>
            Key {maskedLast4(provider.last4)}
            {provider.keySource ? <span className="muted"> · from {provider.keySource}</span> : null}
          </span>
          <button
            type="button"
            className="btn btn-small"
            disabled={busy === 'testing'}
            onClick={() => void testKey(pid)}
          >
            {busy === 'testing' ? 'Testing…' : 'Test key'}
          </button>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => setEditing(true)}>
            Replace
          </button>
          <button
            type="button"
            className="btn btn-small btn-ghost btn-danger"
            aria-label={`Remove ${provider.name} key`}
            disabled={busy === 'removing'}
            onClick={() => void removeKey(pid)}
          >
            Remove
          </button>
        </div>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      )}
      {test && !showForm && (
        <p className={`key-test ${test.ok ? 'key-test-ok' : 'key-test-failed'}`} role="status">
          <span aria-hidden="true">{test.ok ? '✓ ' : '✗ '}</span>
          {test.message}
        </p>
      )}
    </div>
  );
}

function Advanced({ provider }: { provider: ProviderEntry }) {
  const id = useId();
  const pid = provider.id as ProviderKeyId;
  const [value, setValue] = useState(provider.baseUrl ?? '');
  const busy = useProviders((s) => s.busy[pid]);
  const error = useProviders((s) => s.urlErrors[pid]);
  const setBaseUrl = useProviders((s) => s.setBaseUrl);
  const dirty = value.trim() !== (provider.baseUrl ?? '');
  return (
    <details className="provider-advanced" open={provider.baseUrl !== null || undefined}>
      <summary>Advanced</summary>
      <form
        className="field"
        onSubmit={(e) => {
          e.preventDefault();
          void setBaseUrl(pid, value.trim() === '' ? null : value);
        }}
      >
        <label className="field-label" htmlFor={id}>
          API base URL
        </label>
        <div className="row">
          <input
            id={id}
            className="input grow mono"
            type="url"
            inputMode="url"
            spellCheck={false}
            placeholder={`${provider.name}'s own address`}
            value={value}
            aria-invalid={error ? true : undefined}
            onChange={(e) => setValue(e.target.value)}
          />
          <button type="submit" className="btn btn-small" disabled={!dirty || busy === 'url'}>
            Save
          </button>
          {provider.baseUrl !== null && (
            <button
              type="button"
              className="btn btn-ghost btn-small"
              onClick={() => void setBaseUrl(pid, null).then((ok) => ok && setValue(''))}
            >
              Use default
            </button>
          )}
        </div>
        {error ? (
          <p className="field-error" role="alert">
            {error}
          </p>
        ) : (
          <span className="field-help">
            For a proxy, a regional endpoint or a test server. http:// or https:// only.
          </span>
        )}
      </form>
    </details>
  );
}

export function ProviderCard({
  provider,
  catalog,
  readOnly,
}: {
  provider: ProviderEntry;
  catalog: readonly ModelRecord[];
  readOnly: boolean;
}) {
  const busy = useProviders((s) => s.busy[provider.id]);
  const setEnabled = useProviders((s) => s.setEnabled);
  const badge = healthBadge(provider);
  return (
    <article
      className={`provider${provider.enabled ? '' : ' provider-off'}`}
      role="group"
      aria-label={`Provider ${provider.name}`}
    >
      <div className="provider-head">
        <div className="grow">
          <div className="provider-title">
            <span className="provider-name">{provider.name}</span>
            <span className={`badge${badge.tone === 'neutral' ? '' : ` badge-${badge.tone}`}`} aria-label="Health">
              {badge.label}
            </span>
          </div>
          {provider.description && <div className="faint provider-desc">{provider.description}</div>}
        </div>
        {readOnly ? (
          <span className="faint">{provider.configured ? 'Configured' : 'Not configured'}</span>
        ) : (
          <label className="switch">
            <input
              type="checkbox"
              role="switch"
              checked={provider.enabled}
              disabled={busy === 'switching'}
              aria-label={`Use ${provider.name}`}
              onChange={(e) => void setEnabled(provider.id as ProviderKeyId, e.target.checked)}
            />
            <span aria-hidden="true">{provider.enabled ? 'On' : 'Off'}</span>
          </label>
        )}
      </div>
      {badge.detail && <p className="field-help provider-health">{badge.detail}</p>}
      <Offers provider={provider} catalog={catalog} />
      {!readOnly && <KeyField provider={provider} />}
      {!readOnly && <Advanced provider={provider} />}
    </article>
  );
}
