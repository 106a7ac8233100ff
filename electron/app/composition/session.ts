import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  createApiClient,
  listAllModels,
  withCatalogCache,
  withOfflineCatalog,
  type ApiClient,
} from '../../core/api/index.ts';
import { createDownloadManager } from '../../core/downloads/index.ts';
import { createLedger } from '../../core/ledger/index.ts';
import { openDatabase } from '../../core/library/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import { imageDownloadDir } from '../../core/settings/index.ts';
import type { Profile } from '../../../shared/ipc/index.ts';
import { createFileDedupStore, createUploader } from '../../core/uploads/index.ts';
import type { EventBus } from '../events.ts';
import { forgetPreviews } from '../submit-route.ts';
import { toDownloadProgress, toRateLimitState } from '../mappers.ts';
import type { ServiceSession } from '../types.ts';
import { openProfileQueue } from './session-jobs.ts';
import { openLibrary } from './session-library.ts';

/**
 * A profile's session, built by the composition root (composition-root.ts) from what it is given:
 * the profiles, the event bus, the Local engine's key, the clock. Nothing else opens one.
 */
export interface SessionDeps {
  dataDir: string;
  profiles: Profiles;
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

/** The profile's client, and the key it sends. */
async function profileClient(deps: SessionDeps, profile: Profile, dir: string) {
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
  // One read of the lists for every reader (docs/api.md, "What counts against the rate limits").
  const catalog = withCatalogCache(api, deps.now ?? Date.now);
  await getKey();
  return {
    api,
    catalog,
    keyLast4: (): string | null => keyLast4,
    readKeyLast4: async (): Promise<string | null> => {
      await getKey();
      return keyLast4;
    },
  };
}

/** The profile's file transfers: uploads (with their dedup store) and downloads into the download folder. */
function profileTransfers(deps: SessionDeps, profile: Profile, dir: string, api: ApiClient) {
  const settings = deps.profiles.settings();
  const uploader = createUploader({
    api,
    dedup: createFileDedupStore(path.join(dir, 'uploads.json')),
    // The Local engine listens on a new port each launch: its base URL would never match a stored
    // upload again. Its store is this profile's own, so one fixed name is enough.
    ...(profile.kind === 'local' ? { serviceKey: 'local-engine' } : {}),
    ...(deps.binaries ?? {}),
    ...(settings.ffmpegPath ? { ffmpegPath: settings.ffmpegPath } : {}),
  });
  const downloads = createDownloadManager({
    api,
    dir: settings.downloadDir,
    imageDir: imageDownloadDir(settings),
    pattern: settings.namingPattern,
  });
  return { uploader, downloads };
}

export async function openServiceSession(deps: SessionDeps): Promise<ServiceSession> {
  const now = deps.now ?? Date.now;
  const { bus, profiles } = deps;
  const profile = await profiles.active();
  const dir = path.join(deps.dataDir, 'profiles', profile.id.replace(/[^a-zA-Z0-9_-]/g, '_'));
  mkdirSync(dir, { recursive: true });
  const { api, catalog, keyLast4, readKeyLast4 } = await profileClient(deps, profile, dir);
  // A key, a switch or a catalog sync changed what the service lists and where it routes: the
  // next read and the next preview ask again.
  const stopCatalog = bus.on((e) => {
    if (e.type !== 'providers.changed') return;
    catalog.clear();
    forgetPreviews(api);
  });
  const { uploader, downloads } = profileTransfers(deps, profile, dir, api);
  const { db, library, restoring, sync, guard } = openLibrary({ dir, api, downloads, profiles, bus, now });
  const ledger = createLedger({ db: openDatabase(path.join(dir, 'ledger.db')), now });
  const jobs = openProfileQueue({
    dir,
    profileId: profile.id,
    embedded: profile.kind === 'local',
    api,
    uploader,
    downloads,
    library,
    ledger,
    profiles,
    bus,
    now,
    keyLast4,
  });
  const { queue } = jobs;
  const stopProgress = downloads.onProgress((p) =>
    bus.publish({ type: 'transfer.progress', transfer: toDownloadProgress(p) }),
  );
  const stopRate = api.onStateChange(() =>
    bus.publish({ type: 'ratelimit.changed', state: toRateLimitState(api, now()) }),
  );
  // A kill between the journal's write and the ledger's loses no charge: the journal has it.
  for (const job of queue.list()) jobs.recordCharge(job);
  await queue.start();
  void listAllModels(api)
    .then((all) => {
      jobs.setModels(all);
      queue.recheck();
    })
    .catch(() => undefined);
  const stopBudget = profiles.onChange(() => queue.recheck());
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
    exemptFromBudget: jobs.exempt,
    async dispose() {
      stopBudget();
      stopCatalog();
      stopProgress();
      stopRate();
      await queue.dispose();
      await guard.dispose();
      await downloads.dispose();
      await api.dispose();
      await restoring;
      db.close();
      jobs.jobsDb.close();
      ledger.close();
    },
  };
}
