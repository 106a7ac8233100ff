import { useEffect, useMemo } from 'react';
import { onEvent } from '../../lib/ipc.ts';
import { Icon } from '../../lib/icons.tsx';
import { useShell } from '../../lib/shell/index.ts';
import { useProviders } from '../../features/providers/store/index.ts';
import { healthBadge } from '../../features/providers/store/selectors.ts';
import { useSettings } from '../../stores/settings/index.ts';
import { activeProfile } from '../../stores/settings/selectors.ts';
import { JobsButton } from './JobsPopover.tsx';
import { spendMeter } from './spend.ts';
import { useSpend } from './useSpend.ts';

function SpendMeter() {
  const spend = useSpend((s) => s.spend);
  const budget = useSettings((s) => activeProfile(s)?.budget ?? null);
  const profileId = useSettings((s) => s.profiles.activeId);
  useEffect(() => {
    void useSpend.getState().load();
    // A job's charge is in the ledger once it has ended; another profile has its own ledger.
    return onEvent('job.updated', ({ job }) => {
      if (job.state === 'done' || job.state === 'failed') void useSpend.getState().load();
    });
  }, [profileId]);
  if (!spend) return null;
  const meter = spendMeter(spend, budget);
  return (
    <button
      type="button"
      className={`topbar-spend topbar-spend-${meter.tone}`}
      title={meter.detail}
      aria-label={meter.detail}
      data-testid="spend-meter"
      onClick={() => useShell.getState().go('settings')}
    >
      {meter.text}
    </button>
  );
}

/** One word for the providers the active service routes to: all well, or how many are not. */
function ProviderHealth() {
  const status = useProviders((s) => s.status);
  const providers = useProviders((s) => s.providers);
  useEffect(() => {
    if (useProviders.getState().status === 'idle') void useProviders.getState().load();
  }, []);
  const summary = useMemo(() => {
    const usable = providers.filter((p) => p.enabled && p.configured);
    const down = usable.filter((p) => healthBadge(p).tone === 'danger');
    if (usable.length === 0) return { text: 'No providers', tone: 'warning', detail: 'No provider has a key yet' };
    if (down.length > 0)
      return {
        text: `${down.length} unhealthy`,
        tone: 'danger',
        detail: `Unhealthy: ${down.map((p) => p.name).join(', ')}`,
      };
    return { text: 'Providers OK', tone: 'success', detail: `${usable.length} providers ready` };
  }, [providers]);
  if (status !== 'ready') return null;
  return (
    <button
      type="button"
      className="topbar-health"
      title={summary.detail}
      aria-label={`Provider health: ${summary.detail}`}
      onClick={() => useShell.getState().go('settings')}
    >
      <span className={`dot dot-${summary.tone}`} aria-hidden="true" />
      {summary.text}
    </button>
  );
}

/**
 * The bar above every screen (docs/workflows.md, "The top bar"): today's spend against its cap,
 * the jobs in flight with the queue as a popover, the providers' health, and Settings.
 */
export function TopBar() {
  // Nothing to ask before main answers: the shell's notice says when it does not.
  const connected = useSettings((s) => s.connected === true);
  return (
    <header className="topbar" aria-label="Status">
      <div className="grow" />
      {connected && <SpendMeter />}
      <JobsButton />
      {connected && <ProviderHealth />}
      <button
        type="button"
        className="icon-btn"
        aria-label="Open settings"
        title="Settings"
        onClick={() => useShell.getState().go('settings')}
      >
        <Icon name="settings" size={16} />
      </button>
    </header>
  );
}
