import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { TIERS, type TierName } from '../../shared/api/index.ts';
import { createApiClient, withOfflineCatalog, type ApiClient } from '../core/api/index.ts';
import { createDownloadManager, type DownloadManager } from '../core/downloads/index.ts';
import { createJobJournal, createJobQueue, type JobQueue } from '../core/jobs/index.ts';
import {
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  downloadManagerAsRetentionDownloader,
  openDatabase,
  type LibraryStore,
  type LibrarySync,
  type RetentionGuard,
} from '../core/library/index.ts';
import type { Profiles } from '../core/profiles/index.ts';
import type { SecretStore } from '../core/secrets/index.ts';
import { createFileDedupStore, createUploader, type Uploader } from '../core/uploads/index.ts';
import type { EventBus } from './events.ts';
import { toJob, toQueueStats, toRateLimitState } from './mappers.ts';

/**
 * Everything bound to one profile (one service + one account): its client, uploads, downloads,
 * job queue and library index. Switching profiles disposes the session and builds the next one;
 * each profile keeps its own journal and index under `<data>/profiles/<id>/`.
 */
export interface ServiceSession {
  readonly profileId: string;
  readonly api: ApiClient;
  readonly uploader: Uploader;
  readonly downloads: DownloadManager;
  readonly queue: JobQueue;
  readonly library: LibraryStore;
  readonly sync: LibrarySync;
  readonly guard: RetentionGuard;
  dispose(): Promise<void>;
}

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
}

const DAY = 86_400_000;

export async function openServiceSession(deps: SessionDeps): Promise<ServiceSession> {
  const now = deps.now ?? Date.now;
  const profile = await deps.profiles.active();
  const dir = path.join(deps.dataDir, 'profiles', profile.id.replace(/[^a-zA-Z0-9_-]/g, '_'));
  mkdirSync(dir, { recursive: true });
  const account = deps.profiles.keyAccount(profile.id);
  const client = createApiClient({
    baseUrl: profile.baseUrl,
    getKey: async () =>
      profile.kind === 'local' ? deps.localKey() : await deps.secrets.get(account).catch(() => null),
  });
  // A remote service can be out of reach: its last model and provider lists let Compose work
  // offline (issue 14). The Local engine is always there.
  const api = profile.kind === 'local' ? client : withOfflineCatalog(client, path.join(dir, 'catalog.json'));
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
  const db = openDatabase(path.join(dir, 'library.db'));
  // Only for items whose service sends no expiresAt: the account's own retention when /usage has
  // said it (custom limits), else the tier table's.
  const retentionDays = (): number => {
    if (api.retentionDays !== null) return api.retentionDays;
    const tier = api.tier as TierName | null;
    return tier && Object.hasOwn(TIERS, tier) ? TIERS[tier].retentionDays : TIERS.free.retentionDays;
  };
  const library = createLibraryStore({ db, now, retentionDays });
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
      const p = deps.profiles.settings().retentionPolicy;
      return p === 'mine' ? 'everything' : p;
    },
    warnBeforeMs: deps.profiles.settings().retentionWarnDays * DAY,
    onEvent: (e) => {
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
    },
  });
  const jobsDb = openDatabase(path.join(dir, 'jobs.db'));
  const queue = createJobQueue({
    journal: createJobJournal({ db: jobsDb, now }),
    api,
    uploader,
    downloader: downloads,
    onEvent: (e) => {
      if (e.type === 'stats') {
        bus.publish({ type: 'queue.stats', stats: toQueueStats(e.stats, now()) });
        return;
      }
      if (e.type === 'removed') {
        bus.publish({ type: 'job.removed', id: e.id });
        return;
      }
      bus.publish({ type: 'job.updated', job: toJob(e.job, queue.list(), now(), queue.progress(e.job.id)) });
      if (e.job.state === 'done' && e.job.result) {
        // The new items enter the index; files the job saved are recorded as downloaded.
        library.upsert(e.job.result.items.map((i) => ({ modelSlug: i.model, providerName: i.provider, ...i })));
        e.job.result.items.forEach((item, n) => {
          const file = e.job.downloads[n];
          if (file) library.markDownloaded(item.id, file);
        });
        bus.publish({
          type: 'library.changed',
          change: { reason: 'generated', ids: e.job.result.items.map((i) => i.id) },
        });
      }
    },
  });
  const stopProgress = downloads.onProgress((p) =>
    bus.publish({
      type: 'transfer.progress',
      transfer: {
        id: `download:${p.id}`,
        direction: 'download',
        jobId: null,
        itemId: p.id,
        done: p.received,
        total: p.total,
        state: 'running',
        error: null,
      },
    }),
  );
  const stopRate = api.onStateChange(() =>
    bus.publish({ type: 'ratelimit.changed', state: toRateLimitState(api, now()) }),
  );
  await queue.start();
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
    async dispose() {
      stopProgress();
      stopRate();
      await queue.dispose();
      await guard.dispose();
      await downloads.dispose();
      await api.dispose();
      db.close();
      jobsDb.close();
    },
  };
}
