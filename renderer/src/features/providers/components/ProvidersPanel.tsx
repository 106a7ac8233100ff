import { useEffect } from 'react';
import { useModels } from '../../../stores/models/index.ts';
import { useProviders } from '../store/index.ts';
import { healthBadge, providerOffers } from '../store/selectors.ts';
import { ProviderCard } from './ProviderCard.tsx';
import { RefreshModels } from './RefreshModels.tsx';
import '../providers.css';

/**
 * Settings → Providers. With the Local engine: every AI provider, its key (stored by main in the
 * OS keychain; only the last 4 characters come back), a key test, a switch and its base URL. With a
 * remote profile: that service's providers, read-only, since its operator holds the keys.
 */
export function ProvidersPanel() {
  const status = useProviders((s) => s.status);
  const error = useProviders((s) => s.error);
  const providers = useProviders((s) => s.providers);
  const keysHeldBy = useProviders((s) => s.keysHeldBy);
  const keyStore = useProviders((s) => s.keyStore);
  const keyStoreAvailable = useProviders((s) => s.keyStoreAvailable);
  const catalog = useModels((s) => s.catalog);
  const modelsStatus = useModels((s) => s.status);

  useEffect(() => {
    if (status === 'idle') void useProviders.getState().load();
  }, [status]);
  useEffect(() => {
    if (modelsStatus === 'idle') void useModels.getState().load();
  }, [modelsStatus]);

  const readOnly = keysHeldBy === 'operator';
  const ai = providers.filter((p) => p.kind === 'remote');
  const builtIn = providers.filter((p) => p.kind === 'local');
  return (
    <section className="panel providers-panel" aria-labelledby="providers-h">
      <div className="panel-head">
        <h3 id="providers-h">Providers</h3>
        {status === 'ready' && (
          <span className="faint">
            {ai.filter((p) => p.configured && p.enabled).length} of {ai.length} AI providers ready
          </span>
        )}
      </div>
      {readOnly ? (
        <p className="notice notice-info" role="note">
          These are the remote service&rsquo;s providers. Its operator holds their keys, so they are shown here
          read-only.
        </p>
      ) : (
        <>
          <p className="field-help providers-intro">
            Paste a key from your own account to use a provider through the Local engine. Keys are never shown again.{' '}
            {keyStoreAvailable ? (keyStore ?? 'Keys go to your OS keychain.') : null}
          </p>
          {/* Keys stored but unreadable (the key file's passphrase) are not "No key": say why, with the fix. */}
          {!keyStoreAvailable && keyStore && (
            <p className="notice notice-error" role="alert">
              {keyStore}
            </p>
          )}
        </>
      )}
      {status === 'ready' && <RefreshModels />}
      {status === 'loading' && (
        <div className="skeleton" style={{ height: 160 }} role="status" aria-label="Loading providers" />
      )}
      {status === 'error' && (
        <div className="notice notice-error" role="alert">
          <span className="grow">Could not load providers: {error}</span>
          <button type="button" className="btn btn-small" onClick={() => void useProviders.getState().load()}>
            Retry
          </button>
        </div>
      )}
      {status === 'ready' && (
        <>
          <div className="provider-list">
            {ai.map((p) => (
              <ProviderCard key={p.id} provider={p} catalog={catalog} readOnly={readOnly} />
            ))}
          </div>
          {builtIn.length > 0 && (
            <div className="provider-builtin">
              <h4>Built in (offline, no key)</h4>
              <ul>
                {builtIn.map((p) => {
                  const badge = healthBadge(p);
                  return (
                    <li key={p.id} aria-label={`Provider ${p.name}`}>
                      <span className="provider-name">{p.name}</span>{' '}
                      <span className={`badge${badge.tone === 'neutral' ? '' : ` badge-${badge.tone}`}`}>
                        {badge.label}
                      </span>{' '}
                      <span className="faint">
                        {providerOffers(p, catalog)
                          .map((o) => o.name)
                          .join(', ')}
                      </span>
                    </li>
                  );
                })}
              </ul>
            </div>
          )}
        </>
      )}
    </section>
  );
}
