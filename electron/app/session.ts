import type { ServiceSession } from './types.ts';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { TIERS, type TierName } from '../../shared/api/index.ts';
import { createApiClient, listAllModels, withOfflineCatalog, type ApiClient } from '../core/api/index.ts';
import { createDownloadManager, type DownloadManager, type DownloadProgress } from '../core/downloads/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase, type Job as CoreJob } from '../core/jobs/index.ts';
import {
  budgetHoldFor,
  catalogEstimate,
  createLedger,
  itemsCharge,
  utcDay,
  type Ledger,
} from '../core/ledger/index.ts';
import type { ModelRecord } from '../../shared/api/index.ts';
import {
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  downloadManagerAsRetentionDownloader,
  openDatabase,
  type LibraryStore,
  type RetentionEvent,
} from '../core/library/index.ts';
import type { Profiles } from '../core/profiles/index.ts';
import type { SecretStore } from '../core/secrets/index.ts';
import { createFileDedupStore, createUploader } from '../core/uploads/index.ts';
import type { EventBus } from './events.ts';
import { NO_POSITIONS, queuePositions, toJob, toQueueStats, toRateLimitState } from './mappers.ts';
import { lineageDownloader, recordingUploader, restoreChainsFromSidecars } from './shot-lineage.ts';

export interface SessionDeps {
  dataDir: string;
  profiles: Profiles;
  secrets: SecretStore;
  bus: EventBus;
  /** The Local engine's key (the local profile uses it; remote profiles read the keychain). */
  localKey: () => string | null;
  now?: () => number;
  /** Background work (periodic retention checks, first sync); off in tests. */
  background?: boolean;
  binaries?: { ffmpegPath: string; ffprobePath: string };
  /** Where the client's one line per dropped extension field goes (the app's log). */
  onNotice?: (line: string) => void;
}

const DAY = 86_400_000;

export async function openServiceSession(deps: SessionDeps): Promise<ServiceSession> {
  const now = deps.now ?? Date.now;
  const profile = await deps.profiles.active();
  const dir = path.join(deps.dataDir, 'profiles', profile.id.replace(/[^a-zA-Z0-9_-]/g, '_'));
  mkdirSync(dir, { recursive: true });
  // Only the last 4 characters are ever kept: they name the key in the ledger and in /usage. Every
  // request reads the key, so this is the key the next submit goes out with.
  let keyLast4: string | null = null;
  const getKey = async (): Promise<string | null> => {
    const key = profile.kind === 'local' ? deps.localKey() : await deps.profiles.getKey(profile.id).catch(() => null);
    if (key) keyLast4 = key.slice(-4);
    return key;
  };
  const client = createApiClient({
    baseUrl: profile.baseUrl,
    getKey,
    ...(deps.onNotice ? { onNotice: deps.onNotice } : {}),
  });
  // A remote service can be out of reach: its last model and provider lists let Compose work
  // offline (docs/workflows.md). The Local engine is always there.
  const api = profile.kind === 'local' ? client : withOfflineCatalog(client, path.join(dir, 'catalog.json'));
  await getKey();
  const readKeyLast4 = async (): Promise<string | null> => {
    await getKey();
    return keyLast4;
  };
  const settings = deps.profiles.settings();
  const { bus } = deps;
  const uploader = createUploader({
    api,
    dedup: createFileDedupStore(path.join(dir, 'uploads.json')),
    // The Local engine listens on a new port each launch: its base URL would never match a stored
    // upload again. Its store is this profile's own, so one fixed name is enough.
    ...(profile.kind === 'local' ? { serviceKey: 'local-engine' } : {}),
    ...(deps.binaries ?? {}),
    ...(settings.ffmpegPath ? { ffmpegPath: settings.ffmpegPath } : {}),
  });
  const downloads = createDownloadManager({ api, dir: settings.downloadDir, pattern: settings.namingPattern });
  const { db, library, restoring, sync, guard } = openLibrary({
    dir,
    api,
    downloads,
    profiles: deps.profiles,
    bus,
    now,
  });
  const jobsDb = openJournalDatabase(path.join(dir, 'jobs.db'));
  // Sidecars of job results carry routing, provider name, start frame and shot lineage (docs/workflows.md).
  const frames = recordingUploader(uploader);
  const ledger = createLedger({ db: openDatabase(path.join(dir, 'ledger.db')), now });
  const { noteSubmit, recordCharge } = ledgerRecorder({ ledger, profileId: profile.id, keyLast4: () => keyLast4, now });
  // Budgets: the catalog the renderer shows prices a job that has no previewed price.
  let models: ModelRecord[] = [];
  const exempt = new Set<string>();
  const priceOf = (job: CoreJob): number | null => {
    const previewed = job.route?.price;
    return typeof previewed === 'number' ? previewed : catalogEstimate(models, job.kind, job.request);
  };
  const queue = createJobQueue({
    journal: createJobJournal({ db: jobsDb, now }),
    api,
    uploader: frames,
    downloader: lineageDownloader({
      downloads,
      library,
      queue: () => queue,
      api,
      uploads: frames,
      embedded: profile.kind === 'local',
    }),
    holdFor: budgetHoldFor({
      ledger,
      profileId: profile.id,
      budget: () => deps.profiles.budget(profile.id),
      priceOf,
      exempt: (id) => exempt.has(id),
      now,
    }),
    onEvent: (e) => {
      if (e.type === 'stats') {
        bus.publish({ type: 'queue.stats', stats: toQueueStats(e.stats, now()) });
        return;
      }
      if (e.type === 'removed') {
        bus.publish({ type: 'job.removed', id: e.id });
        return;
      }
      if (e.job.state === 'done' || e.job.state === 'failed' || e.job.state === 'canceled') exempt.delete(e.job.id);
      try {
        noteSubmit(e.job);
        recordCharge(e.job);
      } catch {
        // The journal holds the result: the next start records it (see below).
      }
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
      if (e.job.state === 'done' && e.job.result) indexJobResult(library, bus, e.job, e.job.result);
    },
  });
  const stopProgress = downloads.onProgress((p) =>
    bus.publish({
      type: 'transfer.progress',
      transfer: downloadTransfer(p),
    }),
  );
  const stopRate = api.onStateChange(() =>
    bus.publish({ type: 'ratelimit.changed', state: toRateLimitState(api, now()) }),
  );
  // A kill between the journal's write and the ledger's loses no charge: the journal has it.
  for (const job of queue.list()) recordCharge(job);
  await queue.start();
  void listAllModels(api)
    .then((all) => {
      models = all;
      queue.recheck();
    })
    .catch(() => undefined);
  const stopBudget = deps.profiles.onChange(() => queue.recheck());
  if (deps.background !== false) {
    guard.start();
    void sync.sync().catch(() => undefined);
  }
  return {
    profileId: profile.id,
    api,
    uploader,
    downloads,
    queue,
    library,
    sync,
    guard,
    ledger,
    keyLast4: readKeyLast4,
    exemptFromBudget(jobId) {
      exempt.add(jobId);
      queue.recheck();
    },
    async dispose() {
      stopBudget();
      stopProgress();
      stopRate();
      await queue.dispose();
      await guard.dispose();
      await downloads.dispose();
      await api.dispose();
      await restoring;
      db.close();
      jobsDb.close();
      ledger.close();
    },
  };
}

/** A retention guard's event as the app tells it: a warning or failure notification, and the library change. */
function publishRetentionEvent(bus: EventBus, now: () => number, e: RetentionEvent): void {
  if (e.type === 'warning') {
    const days = Math.max(0, Math.ceil((e.deadline - now()) / DAY));
    bus.publish({
      type: 'notification',
      notification: {
        level: 'warning',
        title: `Deleted in ${days} day${days === 1 ? '' : 's'}`,
        body: e.prompt,
        jobId: null,
        itemId: e.id,
      },
    });
  } else if (e.type === 'failed') {
    bus.publish({
      type: 'notification',
      notification: {
        level: 'error',
        title: 'Could not save before deletion',
        body: e.message,
        jobId: null,
        itemId: e.id,
      },
    });
  }
  bus.publish({
    type: 'library.changed',
    change: { reason: e.type === 'lost' ? 'lost' : 'retention', ids: [e.id] },
  });
}

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

/** A running download as the transfers list shows it. */
function downloadTransfer(p: DownloadProgress) {
  return {
    id: `download:${p.id}`,
    direction: 'download' as const,
    jobId: null,
    itemId: p.id,
    done: p.received,
    total: p.total,
    state: 'running' as const,
    error: null,
  };
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

/** The profile's library: its index, the chains restored from sidecars, its sync and retention guard. */
function openLibrary(deps: {
  dir: string;
  api: ApiClient;
  downloads: DownloadManager;
  profiles: Profiles;
  bus: EventBus;
  now: () => number;
}) {
  const { dir, api, downloads, profiles, bus, now } = deps;
  const db = openDatabase(path.join(dir, 'library.db'));
  // Only for items whose service sends no expiresAt: the account's own retention when /usage has
  // said it (custom limits), else the tier table's.
  const retentionDays = (): number => {
    if (api.retentionDays !== null) return api.retentionDays;
    const tier = api.tier as TierName | null;
    return tier && Object.hasOwn(TIERS, tier) ? TIERS[tier].retentionDays : TIERS.free.retentionDays;
  };
  const library = createLibraryStore({ db, now, retentionDays });
  // A new index (deleted, or the same download folder on another machine) gets its chains back,
  // in the background: reading every sidecar of a large download folder must not delay the queue.
  const restoring = restoreChainsFromSidecars(library, profiles.settings().downloadDir).catch(() => 0);
  const sync = createLibrarySync({
    store: library,
    source: api,
    // A sync that found nothing new must not make every open grid requery (syncs run on a timer).
    onSynced: (r) => {
      if (r.lost.length > 0) bus.publish({ type: 'library.changed', change: { reason: 'lost', ids: r.lost } });
      if (r.added + r.updated > 0) bus.publish({ type: 'library.changed', change: { reason: 'sync', ids: [] } });
    },
  });
  const guard = createRetentionGuard({
    store: library,
    downloader: downloadManagerAsRetentionDownloader(downloads),
    now,
    policy: () => {
      const p = profiles.settings().retentionPolicy;
      return p === 'mine' ? 'everything' : p;
    },
    warnBeforeMs: profiles.settings().retentionWarnDays * DAY,
    onEvent: (e) => publishRetentionEvent(bus, now, e),
  });
  return { db, library, restoring, sync, guard };
}
