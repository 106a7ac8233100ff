import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngineSpawner } from '../core/engine/index.ts';
import { createProfiles, type Profiles } from '../core/profiles/index.ts';
import {
  createProviderKeyStore,
  createProviderManager,
  createProviderSettings,
  type ProviderManager,
} from '../core/providers/index.ts';
import { createSecretStore, keyStoreChoice, secretStoreOptions, type SecretStore } from '../core/secrets/index.ts';
import {
  createConfSettingsStore,
  defaultDownloadDir,
  imageDownloadDir,
  defaultEngineDataDir,
  type SettingsStore,
} from '../core/settings/index.ts';
import { folderProblem, type PathRulesContext } from '../core/settings/path-rules.ts';
import { createFileLogger, type Logger } from '../../shared/node/logger.ts';
import { activeSession } from './composition/active-session.ts';
import { ipcHandlers } from './composition/handlers.ts';
import { lazyLocalEngine } from './composition/local-engine.ts';
import { mediaToolsFollowing } from './composition/media-tools.ts';
import { openServiceSession } from './composition/session.ts';
import { EventBus } from './events.ts';
import { wireFeedback } from './feedback.ts';
import { localMediaUrl, type MediaRoots } from './local-media.ts';
import { createPathGrants } from './path-grants.ts';
import type { PlatformPort } from './platform.ts';
import { createIpcRouter, type IpcRouter } from './router.ts';
import type { IpcHandlers, ServiceSession, SessionGetter } from './types.ts';
import { createHoverPreviews, type HoverPreviews } from '../core/library/index.ts';

/**
 * The composition root: builds the core services by hand and binds them to the IPC handlers.
 * Plain Node, shared by Electron main and browser mode; only `platform` (and the secret store's
 * fallback cipher) differ. Its parts are in `composition/`, which nothing else imports: a profile's
 * session, the Local engine, the media tools, the handler map (docs/architecture.md, The app's layers).
 */
export interface AppOptions {
  dataDir: string;
  platform: PlatformPort;
  version: string;
  /** Used instead of the settings' default download folder until the user picks one (browser mode with --data). */
  downloadDirOverride?: string;
  /** How a local file becomes a URL for the renderer: `clipdesk-media://` or the host's `/local-media/`. */
  mediaUrlPrefix: string;
  /** Electron passes one with safeStorage as the fallback cipher. */
  secrets?: SecretStore;
  /** `--key-store keychain|file`: where keys go when `secrets` is not given (default CLIPDESK_KEY_STORE, else the keychain). */
  keyStore?: string;
  /**
   * Where CLIPDESK_KEY_STORE, CLIPDESK_KEY_PASSPHRASE, CLIPDESK_API_KEY and the providers' key
   * variables (FAL_KEY, …) are read from; default process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** Where settings and profiles live: electron-store in the app; default a `conf` file in dataDir. */
  settingsStore?: SettingsStore;
  /** The app's install root, never servable; default the folder holding electron/ (repo or app.asar). */
  installRoot?: string;
  /** Background work (periodic retention checks, first sync). Default on. */
  background?: boolean;
  /** The packaged app's ffmpeg/ffprobe (extraResources); default the npm-installed ones. */
  binaries?: { ffmpegPath: string; ffprobePath: string };
  /** How the Local engine's process is made: Electron main passes a utility process; default a Node child. */
  engineSpawner?: EngineSpawner;
  /** What runs this core, as another process finding the engine's folder served names it (default "the Clipdesk app"). */
  program?: string;
  /** Electron main passes its own; default: the 'app' log in the data folder (closed by dispose). */
  logger?: Logger;
}

export interface App {
  readonly router: IpcRouter;
  readonly handlers: IpcHandlers;
  readonly bus: EventBus;
  readonly profiles: Profiles;
  /** The Local engine's AI provider keys, switches and base URLs. */
  readonly providers: ProviderManager;
  readonly mediaRoots: MediaRoots;
  /**
   * Electron main calls this with a path the preload resolved from a dropped or picked File;
   * only such paths (and files under the media roots) are accepted from the renderer.
   */
  grantDroppedPath(file: string): boolean;
  /** The active profile's services, started on first use. */
  session(): Promise<ServiceSession>;
  mediaUrl(file: string): string | null;
  dispose(): Promise<void>;
}

/**
 * At startup: the download folder is served to the page, so one stored before the path rules
 * existed (or edited into the file) that fails them is replaced by the app's own, as is a relative
 * ffmpeg path. The app's own download folders (the default, browser mode's `--data` one) always pass.
 */
function resetUnsafeStoredPaths(profiles: Profiles, rules: PathRulesContext, override: string | undefined): void {
  const { downloadDir, ffmpegPath } = profiles.settings();
  const own = downloadDir === defaultDownloadDir() || downloadDir === override;
  if ((override && downloadDir === defaultDownloadDir()) || (!own && folderProblem(downloadDir, rules)))
    profiles.updateSettings({ downloadDir: override ?? defaultDownloadDir() });
  if (ffmpegPath !== null && !path.isAbsolute(ffmpegPath)) profiles.updateSettings({ ffmpegPath: null });
}

/** The app's stores and services that outlive a profile: the log, keys, settings, profiles, AI providers. */
function appServices(options: AppOptions) {
  const ownLog = options.logger ? null : createFileLogger({ dataDir: options.dataDir, program: 'app' });
  const logger = options.logger ?? ownLog!.logger;
  const env = options.env ?? process.env;
  const secrets =
    options.secrets ??
    createSecretStore(
      secretStoreOptions(keyStoreChoice({ flag: options.keyStore, env, userDataDir: options.dataDir })),
    );
  // One store for profiles and provider settings: two `conf` instances on one file would each
  // overwrite the other's writes.
  const settingsStore = options.settingsStore ?? createConfSettingsStore(options.dataDir);
  const profiles = createProfiles({ store: settingsStore, secrets, envKey: env['CLIPDESK_API_KEY'] ?? null });
  const engineDataDir = defaultEngineDataDir(options.dataDir);
  const providers = createProviderManager({
    keys: createProviderKeyStore(secrets, engineDataDir),
    settings: createProviderSettings(settingsStore),
    logger: logger.child({ component: 'providers' }),
  });
  return { ownLog, logger, env, secrets, profiles, engineDataDir, providers };
}

/**
 * The folders the page may be served from (the download folder, the app's media folder), with
 * the path rules the settings check and the paths granted from drops and pickers.
 */
function mediaFolders(options: AppOptions, profiles: Profiles) {
  const rules: PathRulesContext = {
    home: homedir(),
    appRoots: [options.installRoot ?? fileURLToPath(new URL('../..', import.meta.url)), options.dataDir],
  };
  resetUnsafeStoredPaths(profiles, rules, options.downloadDirOverride);
  const workDir = path.join(options.dataDir, 'media');
  mkdirSync(workDir, { recursive: true });
  // Images are saved in the pictures folder while the download folder is the default (data-paths.ts).
  const mediaRoots: MediaRoots = () => {
    const settings = profiles.settings();
    return { downloads: settings.downloadDir, pictures: imageDownloadDir(settings), work: workDir };
  };
  const mediaUrl = (file: string): string | null => localMediaUrl(mediaRoots, options.mediaUrlPrefix, file);
  const pathGrants = createPathGrants(() => Object.values(mediaRoots()));
  return { rules, workDir, mediaRoots, mediaUrl, pathGrants };
}

/**
 * Each generated video gets its hover-play proxy once it is saved (docs/workflows.md, "Preview
 * renditions"): made in the background, one at a time; the library shows it from its next page.
 */
function makePreviewsOnSave(bus: EventBus, session: SessionGetter, previews: HoverPreviews): () => void {
  return bus.on((e) => {
    if (e.type !== 'library.changed' || e.change.reason !== 'generated') return;
    void session()
      .then(async (s) => {
        for (const id of e.change.ids) {
          const entry = s.library.get(id);
          if (entry?.item.media !== 'video' || !entry.downloadedPath) continue;
          if (await previews.make(id, entry.downloadedPath))
            bus.publish({ type: 'library.changed', change: { reason: 'preview', ids: [id] } });
        }
      })
      .catch(() => undefined);
  });
}

export function createApp(options: AppOptions): App {
  const { ownLog, logger, env, secrets, profiles, engineDataDir, providers } = appServices(options);
  const bus = new EventBus();
  const now = (): number => Date.now();
  const { rules, workDir, mediaRoots, mediaUrl, pathGrants } = mediaFolders(options, profiles);
  const tools = mediaToolsFollowing(options.binaries, profiles.settings().ffmpegPath);
  const localEngine = lazyLocalEngine({
    dataDir: engineDataDir,
    secrets,
    env,
    logger: logger.child({ component: 'engine' }),
    providers,
    profiles,
    ...(options.engineSpawner ? { spawner: options.engineSpawner } : {}),
    ...(options.program ? { program: options.program } : {}),
  });
  // The one place a profile's session is opened: openServiceSession is given what it is built from.
  const sessions = activeSession({
    profiles,
    logger,
    localEngine,
    open: (local) =>
      openServiceSession({
        dataDir: options.dataDir,
        profiles,
        bus,
        localKey: () => local?.getKey() ?? null,
        onNotice: (line) => logger.warn({ component: 'api' }, line),
        now,
        background: options.background ?? true,
        ...(options.binaries ? { binaries: options.binaries } : {}),
      }),
  });
  const session = sessions.get;
  const previews = createHoverPreviews({
    dir: path.join(workDir, 'previews'),
    tools: () => tools.current(),
    onError: (itemId, error) => logger.warn({ component: 'previews', itemId, err: error }, 'no hover preview'),
  });
  const stopPreviews = makePreviewsOnSave(bus, session, previews);
  const stopProfiles = profiles.onChange(() => {
    tools.follow(profiles.settings().ffmpegPath);
    sessions.follow();
  });
  const handlers = ipcHandlers({
    platform: options.platform,
    version: options.version,
    dataDir: options.dataDir,
    bus,
    profiles,
    providers,
    session,
    localEngine,
    media: () => tools.current(),
    pathGrants,
    rules,
    workDir,
    ownDownloadDir: () => options.downloadDirOverride ?? defaultDownloadDir(),
    mediaUrl,
    previewFile: (id) => previews.fileOf(id),
    now,
  });
  const router = createIpcRouter(handlers);
  const stopFeedback = wireFeedback(bus, options.platform, () => profiles.settings().notifications);

  return {
    router,
    handlers,
    bus,
    profiles,
    providers,
    mediaRoots,
    grantDroppedPath: (file) => pathGrants.grant(file),
    session,
    mediaUrl,
    async dispose() {
      stopFeedback();
      stopPreviews();
      await previews.dispose();
      stopProfiles();
      await sessions.dispose();
      await providers.attach(null);
      await (await localEngine.started()?.catch(() => null))?.close();
      await tools.dispose();
      await ownLog?.close();
    },
  };
}
