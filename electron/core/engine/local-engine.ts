import { resolve } from 'node:path';
import type { RunningService } from '../../../server/index.ts';
import { FAL_PLATFORM_URL_ENV, PROVIDER_KEY_ENV_NAMES } from '../../../shared/node/engine-env.ts';
import type { MediaKind, TierName } from '../../../shared/api/index.ts';
import type { Logger } from '../../../shared/node/logger.ts';
import type { EngineProviderOptions, EngineProviders } from '../providers/index.ts';
import type { SecretStore } from '../secrets/index.ts';
import { startEngineProcess, type EngineProcess, type EngineSpawner } from './engine-host.ts';
import type { EngineMethod, EngineStartOptions } from './protocol.ts';
import { engineKey, type EngineKeyStorage } from './engine-key.ts';
export { localEngineKeyAccount } from './engine-key.ts';
import type { FolderOwner } from '../../../shared/node/data-folder-lock.ts';

/**
 * The embedded Local engine: the service, started in a process of its own on loopback, with its
 * own user and key created on first run. The key goes to the keychain; when there is none, to a
 * file in the engine's data folder (engine-key.ts); only when neither can keep it is a key made
 * for this run and revoked on close.
 *
 * Why a process of its own: every ffmpeg a render spawns forks the process that spawns it, which
 * blocks that process for ~15 ms at main's size (more as it grows), and the service's polls and
 * pipeline steps would otherwise take turns with the app's IPC on main's event loop. With the
 * engine apart, main only waits on sockets (docs/architecture.md, "The Local engine's process").
 */
export interface LocalEngineOptions {
  dataDir: string;
  secrets: SecretStore;
  /** 0 (default): any free port. */
  port?: number;
  user?: string;
  tier?: TierName;
  /** Where the service's log lines go (a provider failure, a failed sweep, a 500). */
  logger: Logger;
  /**
   * The environment whose provider key variables (FAL_KEY, REPLICATE_API_TOKEN, …) the engine
   * honours; default process.env. Only those variables cross to the engine.
   */
  env?: NodeJS.ProcessEnv;
  /** The AI providers' keys, base URLs and switches as stored by the app (core/providers). */
  providers?: EngineProviderOptions;
  /** How the engine's process is made: default a Node child; the packaged app passes an Electron utility process. */
  spawner?: EngineSpawner;
  /** What runs it, as another process finding the folder served names it: "the Clipdesk app", "clipdesk generate" … */
  program?: string;
}

/** The service's methods the app uses, across the process boundary. */
export type EngineService = Pick<RunningService, EngineMethod> & {
  /** Test instrumentation: RunningService.stats, asked for across the boundary. */
  stats: {
    maxConcurrent(user: string, kind: MediaKind): Promise<number>;
    running(user: string, kind: MediaKind): Promise<number>;
  };
};

export interface LocalEngine {
  /** `http://127.0.0.1:PORT/v1`; the same for the app's whole run, restarts included. */
  url: string;
  user: string;
  /**
   * Where the key lives: the keychain, the key file in the engine's data folder (no keychain), or
   * 'ephemeral' (this run only: neither could keep it).
   */
  keyStorage: EngineKeyStorage;
  /**
   * Null when this process runs the engine; else the process that serves the data folder, whose
   * engine this one uses as a client (docs/architecture.md, "One engine per data folder").
   */
  owner: FolderOwner | null;
  getKey(): string;
  service: EngineService;
  /** The service's provider controls; each change applies at once and survives an engine restart. */
  providers: EngineProviders;
  /** The engine process's id (tests, diagnostics); changes when it is restarted. */
  pid(): number | undefined;
  close(): Promise<void>;
}

export const LOCAL_ENGINE_USER = 'local';

/** Restarts after a crash: at most this many within RESTART_WINDOW_MS, then the engine stays down (the queue says so). */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

export async function startLocalEngine(options: LocalEngineOptions): Promise<LocalEngine> {
  const dataDir = resolve(options.dataDir);
  const user = options.user ?? LOCAL_ENGINE_USER;
  const tier = options.tier ?? 'pro';
  const logger = options.logger;
  // Kept current as the provider controls change, so that a restarted engine starts as the one it replaces.
  const startOptions: EngineStartOptions = {
    dataDir,
    ...(options.port === undefined ? {} : { port: options.port }),
    // The engine serves only this machine's user, on loopback: a start image on their own network
    // (a NAS, a local dev server) is theirs to use.
    allowPrivateImageUrls: true,
    // Webhooks to this machine (a local receiver) are the owner's own choice here, as are image URLs.
    allowPrivateWebhooks: true,
    // The providers' usual key variables work here as they do for the standalone service, so a
    // machine without a keychain can use them; a key stored in the app (keychain or key file) or
    // with `providers set-key` still wins over them (docs/providers.md). Nothing else of the
    // environment is passed: base URLs stay the app's settings.
    providerEnv: providerKeyVariables(options.env ?? process.env),
    program: `${options.program ?? 'Clipdesk'}'s Local engine`,
    ...options.providers,
  };
  const log = (level: 'info' | 'warn' | 'error', message: string): void => logger[level](message);
  const launch = (): Promise<EngineProcess> =>
    startEngineProcess(startOptions, { log, ...(options.spawner ? { spawner: options.spawner } : {}) });

  let engine = await launch();
  // A restart keeps the port, so that the URL the app's client and profiles hold stays right.
  startOptions.port = engine.port;
  let current: Promise<EngineProcess> = Promise.resolve(engine);
  let closed = false;
  const restarts: number[] = [];
  const watch = (e: EngineProcess): void =>
    e.onCrash((code) => {
      if (closed) return;
      const now = Date.now();
      while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length >= MAX_RESTARTS) {
        logger.error({ code }, 'the Local engine stopped again; not restarting it (restart the app)');
        return;
      }
      restarts.push(now);
      logger.error({ code }, 'the Local engine stopped unexpectedly; restarting it');
      current = launch();
      current.then(
        (next) => {
          engine = next;
          watch(next);
          logger.info({ url: next.url }, 'Local engine restarted');
        },
        (error: unknown) => logger.error({ err: error }, 'the Local engine could not be restarted'),
      );
    });
  watch(engine);

  const call = (async (method: EngineMethod, ...args: unknown[]) =>
    ((await current).call as (m: EngineMethod, ...a: unknown[]) => Promise<unknown>)(
      method,
      ...args,
    )) as EngineProcess['call'];
  const service: EngineService = {
    createKey: (o) => call('createKey', o),
    revokeKey: (id) => call('revokeKey', id),
    listKeys: (u) => call('listKeys', u),
    setTier: (u, t) => call('setTier', u, t),
    setLimits: (u, l) => call('setLimits', u, l),
    sweepRetention: () => call('sweepRetention'),
    rotateWebhookSecret: (id) => call('rotateWebhookSecret', id),
    setProviderKey: async (id, key) => {
      await call('setProviderKey', id, key);
      startOptions.providerKeys = withEntry(startOptions.providerKeys, id, key);
    },
    setProviderEnabled: async (id, enabled) => {
      await call('setProviderEnabled', id, enabled);
      const off = new Set(startOptions.disabledProviders);
      if (enabled) off.delete(id);
      else off.add(id);
      startOptions.disabledProviders = [...off];
    },
    setProviderBaseUrl: async (id, url) => {
      await call('setProviderBaseUrl', id, url);
      startOptions.providerBaseUrls = withEntry(startOptions.providerBaseUrls, id, url);
    },
    testProviderKey: (id, key) => (key === undefined ? call('testProviderKey', id) : call('testProviderKey', id, key)),
    providerStatus: () => call('providerStatus'),
    syncCatalog: (o) => (o === undefined ? call('syncCatalog') : call('syncCatalog', o)),
    stats: {
      maxConcurrent: async (u, kind) => (await current).stat('maxConcurrent', u, kind),
      running: async (u, kind) => (await current).stat('running', u, kind),
    },
  };
  const closeEngine = async (): Promise<void> => {
    closed = true;
    await (await current.catch(() => null))?.close();
  };

  try {
    const { key, keyStorage, ephemeralId } = await engineKey(service, {
      secrets: options.secrets,
      dataDir,
      user,
      tier,
      logger,
    });
    // `pid` is every line's own (the logging process's): the engine's process is enginePid.
    logger.info({ url: engine.url, enginePid: engine.pid, keyStorage }, 'Local engine started');
    return {
      url: engine.url,
      user,
      keyStorage,
      owner: null,
      getKey: () => key,
      service,
      providers: service,
      pid: () => engine.pid,
      async close() {
        logger.info('Local engine stopping');
        if (ephemeralId !== null) await service.revokeKey(ephemeralId).catch(() => false);
        await closeEngine();
      },
    };
  } catch (error) {
    await closeEngine();
    throw error;
  }
}

/**
 * Where the catalog sync reads fal's model listing, when not fal's own address (docs/providers.md,
 * "Syncing the catalog"): an address, not a secret, so it crosses to the engine with the keys.
 */
const LISTING_ADDRESS_VARIABLES = [FAL_PLATFORM_URL_ENV];

/** The providers' key variables (and listing addresses) that are set in `env`, and nothing else of it. */
export function providerKeyVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const name of [...Object.values(PROVIDER_KEY_ENV_NAMES), ...LISTING_ADDRESS_VARIABLES]) {
    const value = env[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

/** A copy of `record` with `id` set to `value`, or without `id` for null (a setting removed). */
function withEntry(
  record: Partial<Record<string, string>> | undefined,
  id: string,
  value: string | null,
): Partial<Record<string, string>> {
  const next = { ...record };
  if (value === null) delete next[id];
  else next[id] = value;
  return next;
}
