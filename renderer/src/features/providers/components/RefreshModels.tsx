import type { RefreshModelsResult } from '../../../../../shared/ipc/index.ts';
import { REMOTE_MODEL_LIST } from '../../../../../shared/ipc/provider-rules.ts';
import { useProviders } from '../store/index.ts';

/** What the button waits for while the Local engine reads the listings. */
export const REFRESH_WAIT = 'Reading fal’s and Replicate’s model listings…';

/** One line per provider: "fal: 112 models, 98 prices", or what went wrong. */
export function syncLines(report: RefreshModelsResult, nameOf: (id: string) => string): string[] {
  return report.providers.map((p) => {
    const name = nameOf(p.provider);
    if (!p.ok) return `${name}: ${p.error ?? 'could not be read'}`;
    return `${name}: ${p.models} ${p.models === 1 ? 'model' : 'models'}, ${p.prices} ${p.prices === 1 ? 'price' : 'prices'}`;
  });
}

/**
 * Settings → Providers → "Refresh models" (docs/providers.md): the Local engine reads fal's and
 * Replicate's own model listings and prices now rather than at its next scheduled sync. A remote
 * service keeps its own list, so the button is off there and says why.
 */
export function RefreshModels() {
  const refresh = useProviders((s) => s.refresh);
  const keysHeldBy = useProviders((s) => s.keysHeldBy);
  const providers = useProviders((s) => s.providers);
  const remote = keysHeldBy === 'operator';
  const nameOf = (id: string) => providers.find((p) => p.id === id)?.name ?? id;
  const report = refresh.report;
  return (
    <div className="refresh-models" role="group" aria-label="Refresh models">
      <div className="row">
        <button
          type="button"
          className="btn btn-small"
          disabled={remote || refresh.running || keysHeldBy === null}
          aria-describedby="refresh-models-note"
          onClick={() => void useProviders.getState().refreshModels()}
        >
          {refresh.running ? REFRESH_WAIT : 'Refresh models'}
        </button>
        <span id="refresh-models-note" className="field-help">
          {remote ? REMOTE_MODEL_LIST : 'Reads the providers’ own model lists and prices now.'}
        </span>
      </div>
      {refresh.error && (
        <p className="field-help field-error" role="alert">
          Could not refresh the models: {refresh.error}
        </p>
      )}
      {report && (
        <ul className="refresh-report" role="status" aria-label="Last refresh">
          {syncLines(report, nameOf).map((line, i) => (
            <li key={report.providers[i]?.provider ?? i} className={report.providers[i]?.ok ? '' : 'field-error'}>
              {line}
            </li>
          ))}
          {report.keptLast && <li>Kept the last catalog for what could not be read.</li>}
          <li className="faint">
            Now {report.models.video} video and {report.models.image} image models.
          </li>
        </ul>
      )}
    </div>
  );
}
