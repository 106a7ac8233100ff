import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createMediaTools, type MediaTools } from '../core/media/index.ts';
import { EventBus } from './events.ts';
import { wireFeedback } from './feedback.ts';
import { appHandlers } from './handlers/app.ts';
import { probeLocalFile } from './handlers/media-tools.ts';
import { settingsHandlers } from './handlers/settings.ts';
import { localMediaUrl, type MediaRoots } from './local-media.ts';
import type { PlatformPort } from './platform.ts';
import { completeHandlers, createIpcRouter, unavailableRoutes, type IpcRouter } from './router.ts';
import { createSettingsStore, type SettingsStore } from './settings.ts';
import type { IpcHandlers } from './types.ts';

/**
 * The composition root: builds the core services by hand and binds them to the IPC handlers.
 * Plain Node, shared by Electron main and browser mode; only `platform` differs.
 */
export interface AppOptions {
  dataDir: string;
  platform: PlatformPort;
  version: string;
  defaultDownloadDir: string;
  /** How a local file becomes a URL for the renderer: `clipdesk-media://` or the host's `/local-media/`. */
  mediaUrlPrefix: string;
}

export interface App {
  readonly router: IpcRouter;
  readonly handlers: IpcHandlers;
  readonly bus: EventBus;
  readonly settings: SettingsStore;
  readonly mediaRoots: MediaRoots;
  /** Routes answering `not_available`, as `domain.action`. */
  readonly unavailable: string[];
  mediaUrl(file: string): string | null;
  dispose(): Promise<void>;
}

/** Which core module each missing route waits for (reported by app.info and `not_available`). */
export function missingCapability(route: string): string {
  const domain = route.split('.')[0];
  switch (domain) {
    case 'profiles':
      return 'core.profiles + core.secrets + core.engine (electron/core/profiles, electron/core/engine)';
    case 'models':
    case 'providers':
    case 'usage':
      return 'the active profile’s service client (electron/core/profiles + electron/core/api)';
    case 'jobs':
      return 'core.jobs (electron/core/jobs)';
    case 'uploads':
      return 'core.uploads (electron/core/uploads)';
    case 'library':
    case 'collections':
      return 'core.library (electron/core/library)';
    case 'media':
      return 'core.library (electron/core/library) for item paths, with core.media';
    default:
      return `the core service behind ${route}`;
  }
}

export function createApp(options: AppOptions): App {
  const bus = new EventBus();
  const settings = createSettingsStore({ dataDir: options.dataDir, defaultDownloadDir: options.defaultDownloadDir });
  const workDir = path.join(options.dataDir, 'media');
  mkdirSync(workDir, { recursive: true });
  const mediaRoots: MediaRoots = () => ({ downloads: settings.get().downloadDir, work: workDir });
  const mediaUrl = (file: string): string | null => localMediaUrl(mediaRoots, options.mediaUrlPrefix, file);

  // ffmpeg follows the setting; a change rebuilds the tools (running work finishes on the old ones).
  let media: MediaTools = createMediaTools(mediaToolsOptions(settings.get().ffmpegPath));
  const retired: MediaTools[] = [];
  let ffmpegPath = settings.get().ffmpegPath;
  const stopSettings = settings.onChange((s) => {
    if (s.ffmpegPath === ffmpegPath) return;
    ffmpegPath = s.ffmpegPath;
    retired.push(media);
    media = createMediaTools(mediaToolsOptions(ffmpegPath));
  });

  let unavailable: string[] = [];
  const handlers = completeHandlers(
    {
      app: appHandlers({ platform: options.platform, version: options.version, dataDir: options.dataDir, unavailable: () => unavailable }),
      settings: settingsHandlers(settings, bus),
      uploads: { probe: ({ path: file }, ctx) => probeLocalFile(media, file, ctx.signal) },
      events: { subscribe: (input, ctx) => bus.stream(ctx.signal, input?.types) },
    },
    missingCapability,
  );
  unavailable = unavailableRoutes(handlers);
  const router = createIpcRouter(handlers);
  const stopFeedback = wireFeedback(bus, options.platform, () => settings.get().notifications);

  return {
    router,
    handlers,
    bus,
    settings,
    mediaRoots,
    unavailable,
    mediaUrl,
    async dispose() {
      stopFeedback();
      stopSettings();
      await Promise.all([media, ...retired].map((m) => m.dispose()));
    },
  };
}

function mediaToolsOptions(ffmpegPath: string | null): Parameters<typeof createMediaTools>[0] {
  return ffmpegPath ? { binaries: { ffmpegPath } } : {};
}
