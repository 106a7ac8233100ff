import path from 'node:path';
import type { ApiClient } from '../../core/api/index.ts';
import type { DownloadManager } from '../../core/downloads/index.ts';
import {
  createJobJournal,
  createJobQueue,
  openJournalDatabase,
  type JobQueue,
  type QueueEvent,
} from '../../core/jobs/index.ts';
import {
  budgetHoldFor,
  budgetTerms,
  jobChargeRecorder,
  type BudgetTerms,
  type JobChargeRecorder,
  type Ledger,
} from '../../core/ledger/index.ts';
import { indexJobResult, type LibraryStore } from '../../core/library/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { Uploader } from '../../core/uploads/index.ts';
import type { EventBus } from '../events.ts';
import { NO_POSITIONS, queuePositions, toJob, toQueueStats } from '../mappers.ts';
import { lineageDownloader, recordingUploader } from '../shot-lineage.ts';

/** What a queue event changes beyond the journal: the ledger, the index, and what the page is told. */
function publishQueueEvent(
  ctx: {
    bus: EventBus;
    now: () => number;
    queue: () => JobQueue;
    library: LibraryStore;
    ledger: JobChargeRecorder;
    budget: BudgetTerms;
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
  ctx.budget.jobChanged(e.job);
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
  const indexed = indexJobResult(ctx.library, e.job);
  if (indexed) bus.publish({ type: 'library.changed', change: { reason: 'generated', ids: indexed } });
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

/**
 * The profile's job queue over its journal, wired to its budgets, the ledger it charges and the
 * library it fills (their rules live in core/ledger and core/library; this only connects them).
 */
export function openProfileQueue(deps: ProfileQueueDeps) {
  const { api, ledger, profileId, now } = deps;
  const jobsDb = openJournalDatabase(path.join(deps.dir, 'jobs.db'));
  // Sidecars of job results carry routing, provider name, start frame and shot lineage (docs/workflows.md).
  const frames = recordingUploader(deps.uploader);
  const recorder = jobChargeRecorder({ ledger, profileId, keyLast4: deps.keyLast4, now });
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
      exempt: budget.isExempt,
      now,
    }),
    onEvent: (e) =>
      publishQueueEvent({ bus: deps.bus, now, queue: () => queue, library: deps.library, ledger: recorder, budget }, e),
  });
  return {
    queue,
    jobsDb,
    recordCharge: recorder.recordCharge,
    setModels: budget.setModels,
    exempt: (jobId: string): void => {
      budget.exempt(jobId);
      queue.recheck();
    },
  };
}
