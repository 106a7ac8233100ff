import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalEngine, type EngineSpawner, type LocalEngine } from '../core/engine/index.ts';
import { createMediaTools, type MediaTools } from '../core/media/index.ts';
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
  defaultEngineDataDir,
  type SettingsStore,
} from '../core/settings/index.ts';
import { PROVIDER_KEY_IDS } from '../../shared/ipc/schemas/providers.ts';
import { folderProblem, type PathRulesContext } from '../core/settings/path-rules.ts';
import { createFileLogger, type Logger } from '../../shared/node/logger.ts';
import { EventBus } from './events.ts';
import { wireFeedback } from './feedback.ts';
import { appHandlers } from './handlers/app.ts';
import { catalogHandlers } from './handlers/catalog.ts';
import { composeHandlers } from './handlers/compose.ts';
import { jobsHandlers } from './handlers/jobs.ts';
import { ledgerHandlers } from './handlers/ledger.ts';
import { libraryHandlers } from './handlers/library.ts';
import { probeLocalFile } from './handlers/media-tools.ts';
import { profilesHandlers } from './handlers/profiles.ts';
import { providersHandlers } from './handlers/providers.ts';
import { settingsHandlers } from './handlers/settings.ts';
import { uploadHandlers } from './handlers/uploads.ts';
import { localMediaUrl, type MediaRoots } from './local-media.ts';
import { createPathGrants } from './path-grants.ts';
import type { PlatformPort } from './platform.ts';
import { createIpcRouter, type IpcRouter } from './router.ts';
import { openServiceSession } from './session.ts';
import type { IpcHandlers, ServiceSession } from './types.ts';

/**
 * The composition root: builds the core services by hand and binds them to the IPC handlers.
 * Plain Node, shared by Electron main and browser mode; only `platform` (and the secret store's
 * fallback cipher) differ.
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

/**
 * The Local engine starts with the first session that needs it and runs until quit, with the
 * provider keys and settings stored so far; later changes reach it through the manager.
 */
function lazyLocalEngine(deps: {
  dataDir: string;
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  providers: ProviderManager;
  profiles: Profiles;
  spawner?: AppOptions['engineSpawner'];
}): (() => Promise<LocalEngine>) & { started(): Promise<LocalEngine> | null } {
  let engine: Promise<LocalEngine> | null = null;
  const start = (): Promise<LocalEngine> => {
    engine ??= (async () => {
      const e = await startLocalEngine({
        dataDir: deps.dataDir,
        secrets: deps.secrets,
        env: deps.env,
        logger: deps.logger,
        providers: await deps.providers.startOptions(PROVIDER_KEY_IDS),
        ...(deps.spawner ? { spawner: deps.spawner } : {}),
      });
      await deps.providers.attach(e.providers);
      deps.profiles.setLocalBaseUrl(e.url);
      return e;
    })();
    // A failed start is retried by the next caller.
    engine.catch(() => {
      engine = null;
    });
    return engine;
  };
  return Object.assign(start, { started: () => engine });
}

/** ffmpeg follows the setting; a change rebuilds the tools (running work finishes on the old ones). */
function mediaToolsFollowing(
  binaries: AppOptions['binaries'],
  initialPath: string | null,
): { current(): MediaTools; follow(ffmpegPath: string | null): void; dispose(): Promise<void> } {
  const toolsFor = (p: string | null): MediaTools =>
    createMediaTools({ binaries: { ...binaries, ...(p ? { ffmpegPath: p } : {}) } });
  let ffmpegPath = initialPath;
  let media = toolsFor(ffmpegPath);
  const retired: MediaTools[] = [];
  return {
    current: () => media,
    follow(next) {
      if (next === ffmpegPath) return;
      ffmpegPath = next;
      retired.push(media);
      media = toolsFor(ffmpegPath);
    },
    async dispose() {
      await Promise.all([media, ...retired].map((m) => m.dispose()));
    },
  };
}

export function createApp(options: AppOptions): App {
  const ownLog = options.logger ? null : createFileLogger({ dataDir: options.dataDir, program: 'app' });
  const logger = options.logger ?? ownLog!.logger;
  const bus = new EventBus();
  const now = (): number => Date.now();
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
  const rules: PathRulesContext = {
    home: homedir(),
    appRoots: [options.installRoot ?? fileURLToPath(new URL('../..', import.meta.url)), options.dataDir],
  };
  const ownDownloadDir = (): string => options.downloadDirOverride ?? defaultDownloadDir();
  resetUnsafeStoredPaths(profiles, rules, options.downloadDirOverride);
  const workDir = path.join(options.dataDir, 'media');
  mkdirSync(workDir, { recursive: true });
  const mediaRoots: MediaRoots = () => ({ downloads: profiles.settings().downloadDir, work: workDir });
  const mediaUrl = (file: string): string | null => localMediaUrl(mediaRoots, options.mediaUrlPrefix, file);
  const pathGrants = createPathGrants(() => Object.values(mediaRoots()));

  const tools = mediaToolsFollowing(options.binaries, profiles.settings().ffmpegPath);

  const localEngine = lazyLocalEngine({
    dataDir: engineDataDir,
    secrets,
    env,
    logger: logger.child({ component: 'engine' }),
    providers,
    profiles,
    ...(options.engineSpawner ? { spawner: options.engineSpawner } : {}),
  });

  // One session per active profile; rebuilt when the profile or what its services were built with changes.
  let current: Promise<ServiceSession> | null = null;
  let builtFor = '';
  const fingerprint = (): string => {
    const s = profiles.settings();
    return JSON.stringify([profiles.activeId(), s.downloadDir, s.namingPattern, s.ffmpegPath]);
  };
  const session = async (): Promise<ServiceSession> => {
    const want = fingerprint();
    if (current && builtFor === want) return current;
    const previous = current;
    builtFor = want;
    current = (async () => {
      await previous?.then((s) => s.dispose()).catch(() => undefined);
      const active = await profiles.active();
      const local = active.kind === 'local' ? await localEngine() : null;
      return openServiceSession({
        dataDir: options.dataDir,
        profiles,
        secrets,
        bus,
        localKey: () => local?.getKey() ?? null,
        onNotice: (line) => logger.warn({ component: 'api' }, line),
        now,
        background: options.background ?? true,
        ...(options.binaries ? { binaries: options.binaries } : {}),
      });
    })();
    current.catch((error: unknown) => {
      logger.warn({ err: error }, 'could not open the service session');
      // A failed start (bad base URL, engine error) is retried on the next call.
      builtFor = '';
    });
    return current;
  };
  const stopProfiles = profiles.onChange(() => {
    tools.follow(profiles.settings().ffmpegPath);
    if (current && builtFor !== fingerprint()) void session().catch(() => undefined);
  });

  const lib = libraryHandlers({
    session,
    bus,
    media: () => tools.current(),
    platform: options.platform,
    workDir,
    downloadDir: () => profiles.settings().downloadDir,
    mediaUrl,
    now,
  });
  const catalog = catalogHandlers(session, now);
  const uploads = uploadHandlers(session, bus);
  const handlers: IpcHandlers = {
    app: appHandlers({ platform: options.platform, version: options.version, dataDir: options.dataDir }),
    settings: settingsHandlers({
      profiles,
      bus,
      platform: options.platform,
      rules,
      defaultDownloadDir: ownDownloadDir,
    }),
    profiles: profilesHandlers(profiles, bus),
    models: catalog.models,
    providers: providersHandlers({
      manager: providers,
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
      probe: async ({ path: file }, ctx) => probeLocalFile(tools.current(), await pathGrants.check(file), ctx.signal),
    },
    library: lib.library,
    collections: lib.collections,
    media: lib.media,
    events: { subscribe: (input, ctx) => bus.stream(ctx.signal, input?.types) },
    compose: composeHandlers(session),
  };
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
      stopProfiles();
      await current?.then((s) => s.dispose()).catch(() => undefined);
      await providers.attach(null);
      await (await localEngine.started()?.catch(() => null))?.close();
      await tools.dispose();
      await ownLog?.close();
    },
  };
}
