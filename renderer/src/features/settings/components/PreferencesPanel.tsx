import { useState } from 'react';
import '../settings.css';
import { THEMES } from './themes.ts';
import type { Settings, SettingsPatch } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import { NAMING_TOKENS } from '../../../stores/settings/selectors.ts';
import { PathSettingField } from './PathSettingField.tsx';

/** A text setting saved on blur or Enter, showing main's message when it is refused. */
function TextSetting({
  field,
  label,
  help,
  value,
  placeholder,
}: {
  field: keyof SettingsPatch;
  label: string;
  help?: string;
  value: string;
  placeholder?: string;
}) {
  const [draft, setDraft] = useState(value);
  const [prev, setPrev] = useState(value);
  if (value !== prev) {
    setPrev(value);
    setDraft(value);
  }
  const error = useSettings((s) => s.fieldErrors[field]);
  const update = useSettings((s) => s.update);
  const commit = () => {
    if (draft === value) return;
    void update({ [field]: draft });
  };
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        className="input mono"
        value={draft}
        placeholder={placeholder}
        aria-invalid={error ? true : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === 'Enter' && commit()}
      />
      {error ? (
        <span className="field-help field-error" role="alert">
          {error}
        </span>
      ) : (
        help && <span className="field-help">{help}</span>
      )}
    </label>
  );
}

export function PreferencesPanel({ settings }: { settings: Settings }) {
  const update = useSettings((s) => s.update);
  return (
    <>
      <section className="panel" aria-labelledby="downloads-h">
        <h3 id="downloads-h">Downloads and retention</h3>
        <PathSettingField
          field="downloadDir"
          label="Download folder"
          value={settings.downloadDir}
          help="Where downloads and the retention guard save files. While it is the default folder, images go to the Clipdesk folder in your Pictures folder."
          consequence="Clipdesk will save downloads there, and this window can open every file in it."
        />
        <TextSetting
          field="namingPattern"
          label="Naming pattern"
          value={settings.namingPattern}
          help={`Tokens: ${NAMING_TOKENS.join(' ')}`}
        />
        <label className="field">
          <span className="field-label">Retention guard</span>
          <select
            className="select"
            value={settings.retentionPolicy}
            onChange={(e) => void update({ retentionPolicy: e.target.value as Settings['retentionPolicy'] })}
          >
            <option value="off">Off: let the service delete expired items</option>
            <option value="favourites">Download favourites before they expire</option>
            <option value="mine">Download everything of mine before it expires</option>
          </select>
        </label>
        <label className="field">
          <span className="field-label">Warn before deletion (days)</span>
          <input
            className="input"
            type="number"
            min={0}
            max={365}
            value={settings.retentionWarnDays}
            onChange={(e) =>
              void update({ retentionWarnDays: Math.max(0, Math.min(365, Math.round(Number(e.target.value) || 0))) })
            }
          />
        </label>
        <PathSettingField
          field="ffmpegPath"
          label="ffmpeg path"
          value={settings.ffmpegPath}
          defaultLabel="Bundled ffmpeg"
          help="The ffmpeg used for previews, trims and exports."
          consequence="Clipdesk will run this program for previews, trims and exports."
        />
        <label className="switch">
          <input
            type="checkbox"
            checked={settings.notifications}
            onChange={(e) => void update({ notifications: e.target.checked })}
          />
          Notify me when a job finishes
        </label>
      </section>
      <section className="panel" aria-labelledby="theme-h">
        <h3 id="theme-h">Appearance</h3>
        <div className="segmented" role="radiogroup" aria-label="Theme">
          {THEMES.map((t) => (
            <button
              key={t.value}
              type="button"
              role="radio"
              aria-checked={settings.theme === t.value}
              onClick={() => void update({ theme: t.value })}
            >
              {t.label}
            </button>
          ))}
        </div>
      </section>
    </>
  );
}
