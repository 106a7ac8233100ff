import type { Job } from '../../../../../shared/ipc/index.ts';
import { formatElapsed, formatPrice } from '../../../lib/format.ts';
import { useModels } from '../../../stores/models/index.ts';
import { modelIdParts, modelName, providerName } from '../../../stores/models/selectors.ts';
import { elapsedSeconds, stateLabel } from '../store/selectors.ts';

const TONE: Record<Job['state'], string> = {
  queued: '',
  uploading: 'badge-accent',
  generating: 'badge-accent',
  downloading: 'badge-accent',
  done: 'badge-success',
  failed: 'badge-danger',
  canceled: '',
};

/**
 * What the row says a job cost: the service's charge once it answered with one. Before that, the
 * routing preview's price at submit; once the job has ended without a charge, never that estimate:
 * a canceled job was not charged (docs/decisions.md), and a failed one's charge is not known.
 */
export function priceLabel(job: Job): string | null {
  if (job.result) return job.result.price === null ? null : formatPrice(job.result.price);
  if (job.state === 'canceled') return 'not charged';
  if (job.state === 'failed' || job.state === 'done') return null;
  return job.route?.price == null ? null : formatPrice(job.route.price);
}

/** What the job is: its state, prompt and request, time spent, attempts and cost. */
export function JobSummary({ job, now }: { job: Job; now: number }) {
  const r = job.request;
  const catalog = useModels((s) => s.catalog);
  const providers = useModels((s) => s.providers);
  const version = modelIdParts(r.model).version;
  // docs/workflows.md: where routing sends it and what it costs, from the preview at submit, then the response.
  const route = job.route ?? null;
  const frameDropped = route?.dropped.includes('image_url') ?? false;
  const price = priceLabel(job);
  return (
    <>
      <div className="row" style={{ flexWrap: 'nowrap' }}>
        <span className={`badge ${TONE[job.state]}`} data-testid="job-state">
          {stateLabel(job, now)}
        </span>
        <span className="job-prompt" title={r.prompt}>
          {r.prompt}
        </span>
      </div>
      <div className="job-meta">
        <span title={r.model}>
          {modelName(catalog, r.model)}
          {version ? ` v${version}` : ''}
        </span>
        <span>{r.kind === 'video' ? `${r.duration ?? 'default'}s` : 'image'}</span>
        {r.size && <span>{r.size}</span>}
        <span>{r.provider ? `pinned: ${providerName(providers, { id: r.provider })}` : r.routing}</span>
        {route?.providerId && (
          <span data-testid="job-provider">
            {providerName(providers, { id: route.providerId, name: route.providerName })}
          </span>
        )}
        {r.startFrame &&
          (frameDropped ? (
            <span className="job-dropped" data-testid="job-frame-dropped" title="The provider takes no start frame">
              start frame dropped
            </span>
          ) : (
            <span>start frame</span>
          ))}
        {route && route.dropped.some((p) => p !== 'image_url') && (
          <span className="job-dropped">dropped: {route.dropped.filter((p) => p !== 'image_url').join(', ')}</span>
        )}
        {/* Variations differ only by their seed: each row says which it has. */}
        {r.seed !== undefined && <span data-testid="job-seed">seed {r.seed}</span>}
        <span>Elapsed {formatElapsed(elapsedSeconds(job, now))}</span>
        {job.attempts > 1 && <span>{job.attempts} attempts</span>}
        {price !== null && <span data-testid="job-price">{price}</span>}
      </div>
    </>
  );
}
