import path from 'node:path';
import type { ApiClient } from '../../core/api/index.ts';
import type { DownloadManager } from '../../core/downloads/index.ts';
import {
  createJobJournal,
  createJobQueue,
  openJournalDatabase,
  type Job as CoreJob,
  type JobQueue,
  type QueueEvent,
} from '../../core/jobs/index.ts';
import { budgetHoldFor, catalogEstimate, itemsCharge, utcDay, type Ledger } from '../../core/ledger/index.ts';
import type { LibraryStore } from '../../core/library/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { Uploader } from '../../core/uploads/index.ts';
import type { ModelRecord } from '../../../shared/api/index.ts';
import type { EventBus } from '../events.ts';
import { NO_POSITIONS, queuePositions, toJob, toQueueStats } from '../mappers.ts';
import { lineageDownloader, recordingUploader } from '../shot-lineage.ts';

/** A finished job's items enter the index; files the job saved are recorded as downloaded. */
function indexJobResult(
  library: LibraryStore,
  bus: EventBus,
  job: CoreJob,
  result: NonNullable<CoreJob['result']>,
): void {
  library.upsert(result.items.map((i) => ({ modelSlug: i.model, providerName: i.provider, ...i })));
  result.items.forEach((item, n) => {
    const file = job.downloads[n];
    if (file) library.markDownloaded(item.id, file);
  });
  library.chains.forgetJob(job.id);
  bus.publish({
    type: 'library.changed',
    change: { reason: 'generated', ids: result.items.map((i) => i.id) },
  });
}

/** What the ledger learns from the queue's job events. */
function ledgerRecorder(deps: { ledger: Ledger; profileId: string; keyLast4: () => string | null; now: () => number }) {
  const { ledger, profileId, now } = deps;
  return {
    /**
     * Each submit's key, noted as the job turns generating (before its POST leaves): the service
     * charges that key, whatever key the app holds when the result arrives (docs/decisions.md).
     */
    noteSubmit: (job: CoreJob): void => {
      const key = deps.keyLast4();
      if (job.state !== 'generating' || job.submittedAt === null || !key) return;
      ledger.noteSubmit({ jobId: job.id, profileId, attempt: job.attempts, key, at: job.submittedAt });
    },
    /** A job's charge enters the ledger with its result; delivered once its files are saved. */
    recordCharge: (job: CoreJob): void => {
      if (!job.result) return;
      const known = ledger.get(job.id);
      const ids = job.result.items.map((i) => i.id);
      if (known && (known.delivered || job.state !== 'done') && known.itemIds.join() === ids.join()) return;
      const price = job.result.price ?? itemsCharge(job.result.items) ?? 0;
      const created = job.result.items[0]?.createdAt;
      ledger.record({
        jobId: job.id,
        profileId,
        key: ledger.submitKey(job.id) ?? deps.keyLast4(),
        day: utcDay(created ?? job.submittedAt ?? now()),
        itemIds: ids,
        price,
        delivered: job.state === 'done',
      });
    },
  };
}

/** Budgets: the catalog the renderer shows prices a job that has no previewed price; "submit once anyway" exempts one. */
function budgetTerms() {
  let models: ModelRecord[] = [];
  const exempt = new Set<string>();
  return {
    exempt,
    setModels: (all: ModelRecord[]): void => {
      models = all;
    },
    priceOf: (job: CoreJob): number | null => {
      const previewed = job.route?.price;
      return typeof previewed === 'number' ? previewed : catalogEstimate(models, job.kind, job.request);
    },
  };
}

/** What a queue event changes beyond the journal: the ledger, the index, and what the page is told. */
function publishQueueEvent(
  ctx: {
    bus: EventBus;
    now: () => number;
    queue: () => JobQueue;
    library: LibraryStore;
    ledger: ReturnType<typeof ledgerRecorder>;
    exempt: Set<string>;
  },
  e: QueueEvent,
): void {
  const { bus, now } = ctx;
  if (e.type === 'stats') {
    bus.publish({ type: 'queue.stats', stats: toQueueStats(e.stats, now()) });
    return;
  }
  if (e.type === 'removed') {
    bus.publish({ type: 'job.removed', id: e.id });
    return;
  }
  if (e.job.state === 'done' || e.job.state === 'failed' || e.job.state === 'canceled') ctx.exempt.delete(e.job.id);
  try {
    ctx.ledger.noteSubmit(e.job);
    ctx.ledger.recordCharge(e.job);
  } catch {
    // The journal holds the result: the next start records it (openServiceSession).
  }
  const queue = ctx.queue();
  bus.publish({
    type: 'job.updated',
    // Most events are a running job's steps: only a queued job needs the line looked at.
    job: toJob(
      e.job,
      e.job.state === 'queued' ? queuePositions(queue.list()) : NO_POSITIONS,
      now(),
      queue.progress(e.job.id),
    ),
  });
  if (e.job.state === 'done' && e.job.result) indexJobResult(ctx.library, bus, e.job, e.job.result);
}

/** What a profile's job queue is built from. */
export interface ProfileQueueDeps {
  dir: string;
  profileId: string;
  /** The profile is the Local engine's. */
  embedded: boolean;
  api: ApiClient;
  uploader: Uploader;
  downloads: DownloadManager;
  library: LibraryStore;
  ledger: Ledger;
  profiles: Profiles;
  bus: EventBus;
  now: () => number;
  /** The last 4 characters of the key in use (the ledger records it per charge). */
  keyLast4: () => string | null;
}

/** The profile's job queue over its journal, with its budgets and the ledger it charges. */
export function openProfileQueue(deps: ProfileQueueDeps) {
  const { api, ledger, profileId, now } = deps;
  const jobsDb = openJournalDatabase(path.join(deps.dir, 'jobs.db'));
  // Sidecars of job results carry routing, provider name, start frame and shot lineage (docs/workflows.md).
  const frames = recordingUploader(deps.uploader);
  const recorder = ledgerRecorder({ ledger, profileId, keyLast4: deps.keyLast4, now });
  const budget = budgetTerms();
  const queue: JobQueue = createJobQueue({
    journal: createJobJournal({ db: jobsDb, now }),
    api,
    uploader: frames,
    downloader: lineageDownloader({
      downloads: deps.downloads,
      library: deps.library,
      queue: () => queue,
      api,
      uploads: frames,
      embedded: deps.embedded,
    }),
    holdFor: budgetHoldFor({
      ledger,
      profileId,
      budget: () => deps.profiles.budget(profileId),
      priceOf: budget.priceOf,
      exempt: (id) => budget.exempt.has(id),
      now,
    }),
    onEvent: (e) =>
      publishQueueEvent(
        { bus: deps.bus, now, queue: () => queue, library: deps.library, ledger: recorder, exempt: budget.exempt },
        e,
      ),
  });
  return {
    queue,
    jobsDb,
    recordCharge: recorder.recordCharge,
    setModels: budget.setModels,
    exempt: (jobId: string): void => {
      budget.exempt.add(jobId);
      queue.recheck();
    },
  };
}
