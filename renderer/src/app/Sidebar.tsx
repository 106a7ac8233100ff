import { useQueue } from '../features/queue/store/index.ts';
import { pendingCount } from '../features/queue/store/selectors.ts';
import { useSettings } from '../stores/settings/index.ts';
import { activeProfile, maskedKey } from '../stores/settings/selectors.ts';
import { Toasts } from './Toasts.tsx';
import { Icon } from '../lib/icons.tsx';
import { MOD } from '../lib/shortcut-labels.ts';
import { useShell } from '../lib/shell/index.ts';
import { SCREEN_LABELS, SCREENS } from '../lib/shell/initialState.ts';

export function Sidebar() {
  const screen = useShell((s) => s.screen);
  const go = useShell((s) => s.go);
  const pending = useQueue((s) => pendingCount(s));
  const profile = useSettings((s) => activeProfile(s));
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Clipdesk</span>
      </div>
      {SCREENS.map((name, i) => (
        <button
          key={name}
          type="button"
          className="nav-item"
          aria-current={screen === name ? 'page' : undefined}
          aria-keyshortcuts={`Control+${i + 1}`}
          title={SCREEN_LABELS[name]}
          onClick={() => go(name)}
        >
          <Icon name={name} />
          <span className="nav-label">{SCREEN_LABELS[name]}</span>
          {name === 'queue' && pending > 0 ? (
            <span className="nav-badge" aria-label={`${pending} pending`}>
              {pending}
            </span>
          ) : (
            <span className="nav-kbd" aria-hidden="true">
              {MOD}
              {i + 1}
            </span>
          )}
        </button>
      ))}
      <Toasts />
      <div className="sidebar-foot" aria-label="Active profile">
        {profile ? (
          <>
            <div style={{ fontWeight: 600 }}>{profile.name}</div>
            <div className="faint">{profile.kind === 'local' ? 'Built-in, offline' : profile.baseUrl}</div>
            {profile.kind === 'remote' && (
              <div className="faint mono">{profile.key.hasKey ? maskedKey(profile.key.last4) : 'No API key'}</div>
            )}
          </>
        ) : (
          <div className="faint">No profile</div>
        )}
      </div>
    </nav>
  );
}
