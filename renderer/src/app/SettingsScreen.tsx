import { ProvidersPanel } from '../features/providers/components/ProvidersPanel.tsx';
import { useSettings } from '../stores/settings/index.ts';
import { PreferencesPanel } from '../features/settings/components/PreferencesPanel.tsx';
import { ProfilesPanel } from '../features/settings/components/ProfilesPanel.tsx';
import { BudgetPanel } from '../features/settings/components/BudgetPanel.tsx';
import { UsagePanel } from '../features/settings/components/UsagePanel.tsx';
import '../features/settings/settings.css';

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
