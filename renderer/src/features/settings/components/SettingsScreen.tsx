import { ProvidersPanel } from '../../providers/components/ProvidersPanel.tsx';
import { useSettings } from '../store/index.ts';
import { PreferencesPanel } from './PreferencesPanel.tsx';
import { ProfilesPanel } from './ProfilesPanel.tsx';
import { BudgetPanel } from './BudgetPanel.tsx';
import { UsagePanel } from './UsagePanel.tsx';
import '../settings.css';

export function SettingsScreen() {
  const status = useSettings((s) => s.status);
  const settings = useSettings((s) => s.settings);
  const error = useSettings((s) => s.error);
  const app = useSettings((s) => s.app);
  return (
    <div className="screen">
      <header className="screen-head">
        <h1>Settings</h1>
        {app && (
          <span className="faint">
            {app.name} {app.version} · {app.mode === 'browser' ? 'browser mode' : 'desktop'}
          </span>
        )}
      </header>
      {status === 'loading' && (
        <div className="skeleton" style={{ height: 200 }} role="status" aria-label="Loading settings" />
      )}
      {status === 'error' && (
        <div className="notice notice-error" role="alert">
          <span className="grow">Could not load settings: {error}</span>
          <button type="button" className="btn btn-small" onClick={() => void useSettings.getState().load()}>
            Retry
          </button>
        </div>
      )}
      {settings && (
        <div className="settings">
          <ProfilesPanel />
          <ProvidersPanel />
          <UsagePanel />
          <BudgetPanel />
          <PreferencesPanel settings={settings} />
        </div>
      )}
    </div>
  );
}
