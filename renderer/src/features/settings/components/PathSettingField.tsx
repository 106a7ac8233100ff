import { useId, useState } from 'react';
import type { PathSetting } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import '../settings.css';

export interface PathSettingFieldProps {
  field: PathSetting;
  label: string;
  /** The stored value; null: the default (the bundled ffmpeg). */
  value: string | null;
  /** Shown when `value` is null. */
  defaultLabel?: string;
  help: string;
  /** What the confirm step says the app will do with the path. */
  consequence: string;
}

/**
 * A folder or file setting that decides what the app serves or runs. In the app, main opens the
 * native dialog (Choose…); the page never sends a path. In browser mode the path is typed, main
 * checks it, and the user confirms the real path main would use before it is stored.
 */
export function PathSettingField({ field, label, value, defaultLabel, help, consequence }: PathSettingFieldProps) {
  const id = useId();
  const native = useSettings((s) => s.app?.capabilities.pickDirectory ?? false);
  const error = useSettings((s) => s.fieldErrors[field]);
  const { choosePath, checkPath, setPath } = useSettings.getState();
  const [draft, setDraft] = useState('');
  const [pending, setPending] = useState<string | null>(null);

  const check = async () => {
    if (draft.trim() === '') return;
    setPending(await checkPath(field, draft.trim()));
  };
  const confirm = async () => {
    if (pending === null) return;
    if (await setPath(field, pending)) {
      setPending(null);
      setDraft('');
    }
  };

  return (
    <div className="field path-setting" role="group" aria-labelledby={`${id}-label`}>
      <span className="field-label" id={`${id}-label`}>
        {label}
      </span>
      <div className="row">
        <span className="mono grow path-setting-value" aria-label={`Current ${label.toLowerCase()}`}>
          {value ?? defaultLabel}
        </span>
        {native && (
          <button type="button" className="btn btn-small" onClick={() => void choosePath(field)}>
            Choose…
          </button>
        )}
        {value !== null && defaultLabel !== undefined && (
          <button type="button" className="btn btn-small btn-ghost" onClick={() => void setPath(field, null)}>
            Use {defaultLabel.toLowerCase()}
          </button>
        )}
      </div>
      {!native && pending === null && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            void check();
          }}
        >
          <label className="visually-hidden" htmlFor={id}>
            New {label.toLowerCase()}
          </label>
          <input
            id={id}
            className="input mono grow"
            value={draft}
            placeholder="Type an absolute path"
            spellCheck={false}
            aria-invalid={error ? true : undefined}
            onChange={(e) => setDraft(e.target.value)}
          />
          <button type="submit" className="btn btn-small" disabled={draft.trim() === ''}>
            Change…
          </button>
        </form>
      )}
      {pending !== null && (
        <div
          className="notice notice-warning path-confirm"
          role="alertdialog"
          aria-label={`Confirm ${label.toLowerCase()}`}
        >
          <p>
            Use <span className="mono path-setting-value">{pending}</span> as {label.toLowerCase()}? {consequence}
          </p>
          <div className="row">
            <button type="button" className="btn btn-primary btn-small" onClick={() => void confirm()}>
              Use this path
            </button>
            <button type="button" className="btn btn-ghost btn-small" onClick={() => setPending(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {error ? (
        <span className="field-help field-error" role="alert">
          {error}
        </span>
      ) : (
        <span className="field-help">{help}</span>
      )}
    </div>
  );
}
