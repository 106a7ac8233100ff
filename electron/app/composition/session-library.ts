import path from 'node:path';
import { TIERS, type TierName } from '../../../shared/api/index.ts';
import type { ApiClient } from '../../core/api/index.ts';
import type { DownloadManager } from '../../core/downloads/index.ts';
import {
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  downloadManagerAsRetentionDownloader,
  openDatabase,
  type RetentionEvent,
} from '../../core/library/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { EventBus } from '../events.ts';
import { restoreChainsFromSidecars } from '../shot-lineage.ts';

const DAY = 86_400_000;

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

/** The profile's library: its index, the chains restored from sidecars, its sync and retention guard. */
export function openLibrary(deps: {
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
