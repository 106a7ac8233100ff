import type { LocalEngine } from '../../core/engine/index.ts';
import type { MediaTools } from '../../core/media/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { ProviderManager } from '../../core/providers/index.ts';
import type { PathRulesContext } from '../../core/settings/path-rules.ts';
import type { EventBus } from '../events.ts';
import { appHandlers } from '../handlers/app.ts';
import { catalogHandlers } from '../handlers/catalog.ts';
import { composeHandlers } from '../handlers/compose.ts';
import { jobsHandlers } from '../handlers/jobs.ts';
import { ledgerHandlers } from '../handlers/ledger.ts';
import { libraryHandlers } from '../handlers/library.ts';
import { probeLocalFile } from '../handlers/media-tools.ts';
import { profilesHandlers } from '../handlers/profiles.ts';
import { providersHandlers } from '../handlers/providers.ts';
import { settingsHandlers } from '../handlers/settings.ts';
import { uploadHandlers } from '../handlers/uploads.ts';
import type { PathGrants } from '../path-grants.ts';
import type { PlatformPort } from '../platform.ts';
import type { IpcHandlers, SessionGetter } from '../types.ts';

/** What the handlers are bound to: the app's services, made by the composition root. */
export interface HandlerParts {
  platform: PlatformPort;
  version: string;
  dataDir: string;
  bus: EventBus;
  profiles: Profiles;
  providers: ProviderManager;
  session: SessionGetter;
  localEngine: () => Promise<LocalEngine>;
  media: () => MediaTools;
  pathGrants: PathGrants;
  rules: PathRulesContext;
  /** Working files (previews, frames): the app's media folder. */
  workDir: string;
  /** The app's own download folder (Settings' "reset"). */
  ownDownloadDir: () => string;
  mediaUrl: (file: string) => string | null;
  /** The hover-play proxy of an item, once made. */
  previewFile?: (itemId: string) => string | null;
  now: () => number;
}

/** Every IPC route's handler, bound to the app's services; paths from the renderer pass the path grants first. */
export function ipcHandlers(parts: HandlerParts): IpcHandlers {
  const { bus, profiles, session, localEngine, pathGrants, now } = parts;
  const lib = libraryHandlers({
    session,
    bus,
    media: parts.media,
    platform: parts.platform,
    workDir: parts.workDir,
    downloadDir: () => profiles.settings().downloadDir,
    mediaUrl: parts.mediaUrl,
    ...(parts.previewFile ? { previewFile: parts.previewFile } : {}),
    now,
  });
  const catalog = catalogHandlers(session, now);
  const uploads = uploadHandlers(session, bus);
  return {
    app: appHandlers({ platform: parts.platform, version: parts.version, dataDir: parts.dataDir }),
    settings: settingsHandlers({
      profiles,
      bus,
      platform: parts.platform,
      rules: parts.rules,
      defaultDownloadDir: parts.ownDownloadDir,
    }),
    profiles: profilesHandlers(profiles, bus),
    models: catalog.models,
    providers: providersHandlers({
      manager: parts.providers,
      session,
      activeIsLocal: async () => (await profiles.active()).kind === 'local',
      startEngine: localEngine,
      catalogSync: async () => (await localEngine()).service,
      bus,
    }),
    usage: { ...catalog.usage, ...ledgerHandlers(session, bus) },
    jobs: jobsHandlers(session, now, (file) => pathGrants.check(file)),
    uploads: {
      fromPath: async (input, ctx) =>
        uploads.fromPath({ ...input, path: await pathGrants.check(input.path) }, ctx.signal),
      fromBytes: (input, ctx) => uploads.fromBytes(input, ctx.signal),
      probe: async ({ path: file }, ctx) => probeLocalFile(parts.media(), await pathGrants.check(file), ctx.signal),
    },
    library: lib.library,
    collections: lib.collections,
    media: lib.media,
    events: { subscribe: (input, ctx) => bus.stream(ctx.signal, input?.types) },
    compose: composeHandlers(session),
  };
}
