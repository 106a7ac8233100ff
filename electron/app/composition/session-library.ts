import path from 'node:path';
import type { ApiClient } from '../../core/api/index.ts';
import type { DownloadManager } from '../../core/downloads/index.ts';
import {
  accountRetentionDays,
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  downloadManagerAsRetentionDownloader,
  openDatabase,
  retentionPolicyOf,
  type RetentionEvent,
} from '../../core/library/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { EventBus } from '../events.ts';
import { retentionNotification } from '../mappers.ts';
import { restoreChainsFromSidecars } from '../shot-lineage.ts';

const DAY = 86_400_000;

/** A retention guard's event as the app tells it: a notification when there is one, and the library change. */
function publishRetentionEvent(bus: EventBus, now: () => number, e: RetentionEvent): void {
  const notification = retentionNotification(e, now());
  if (notification) bus.publish({ type: 'notification', notification });
  bus.publish({ type: 'library.changed', change: { reason: e.type === 'lost' ? 'lost' : 'retention', ids: [e.id] } });
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
  const library = createLibraryStore({ db, now, retentionDays: () => accountRetentionDays(api) });
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
    policy: () => retentionPolicyOf(profiles.settings().retentionPolicy),
    warnBeforeMs: profiles.settings().retentionWarnDays * DAY,
    onEvent: (e) => publishRetentionEvent(bus, now, e),
  });
  return { db, library, restoring, sync, guard };
}
