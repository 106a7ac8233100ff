import path from 'node:path';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { createRouterClient } from '@orpc/server';
import { APP_ENDPOINT_FILE, lookupAppEndpoint, removeStaleAppEndpoint, type AppEndpoint } from '../app/app-endpoint.ts';
import { createApp } from '../app/composition-root.ts';
import { browserPlatform } from '../app/platform.ts';
import { createConfSettingsStore, imageDownloadDir, type SettingsStore } from '../core/settings/index.ts';
import { HTTP_IPC, type IpcClient } from '../../shared/ipc/client.ts';
import type { Logger } from '../../shared/node/logger.ts';

/**
 * What the MCP tools call: the app's IPC contract, either of the app already running on the data
 * folder (over its loopback host) or of a core this process runs itself. Both are the same
 * handlers, so the tools see the same profiles, budgets, queue and library (docs/agents.md).
 */
export interface McpBackend {
  readonly ipc: IpcClient;
  /** 'app': through the running app; 'core': this process runs the core. */
  readonly via: 'app' | 'core';
  readonly dataDir: string;
  /** The folders a path the tools hand out may be in: the download folder and the app's media folder. */
  roots(): Promise<string[]>;
  close(): Promise<void>;
}

export interface BackendOptions {
  dataDir: string;
  /** A profile's name or id; default the active one. */
  profile?: string;
  version: string;
  logger: Logger;
  /** `--key-store`: the key store of the core run here (the running app keeps its own). */
  keyStore?: string;
}

export class BackendError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export async function openBackend(options: BackendOptions): Promise<McpBackend> {
  const found = lookupAppEndpoint(options.dataDir);
  if (found.state === 'stale') {
    // A killed app cannot remove its file: no app answers there, so this process runs the core.
    options.logger.warn(
      { file: APP_ENDPOINT_FILE },
      `stale ${APP_ENDPOINT_FILE}: ${found.reason}; removing it and running the core here`,
    );
    removeStaleAppEndpoint(options.dataDir, found.text);
  }
  const viaApp = found.state === 'live' ? await appClient(found.endpoint, options) : null;
  if (viaApp) return viaApp;
  return coreBackend(options);
}

/** The running app's contract, if it answers on the endpoint it published; null when it does not. */
async function appClient(endpoint: AppEndpoint, options: BackendOptions): Promise<McpBackend | null> {
  const cookie = `clipdesk_${endpoint.port}=${endpoint.secret}`;
  const ipc: IpcClient = createORPCClient(
    new RPCLink({ url: `${endpoint.origin}${HTTP_IPC.rpcPrefix}`, headers: { cookie } }),
  );
  try {
    const info = await ipc.app.info(undefined, { signal: AbortSignal.timeout(5000) });
    if (path.resolve(info.dataDir) !== path.resolve(options.dataDir)) return null;
  } catch (error) {
    options.logger.warn({ err: error }, 'the app endpoint did not answer: running the core here');
    return null;
  }
  // The app's active profile is what its queue runs: another one cannot be used through it.
  if (options.profile !== undefined) {
    const { activeId, profiles } = await ipc.profiles.list();
    const wanted = profiles.find((p) => p.id === options.profile || p.name === options.profile);
    if (!wanted) throw new BackendError('not_found', `No profile named ${options.profile}`);
    if (wanted.id !== activeId)
      throw new BackendError(
        'conflict',
        `The app running on this data folder uses another profile; switch to ${wanted.name} in the app, or quit it`,
      );
  }
  options.logger.info({ origin: endpoint.origin }, 'going through the running app');
  return {
    ipc,
    via: 'app',
    dataDir: options.dataDir,
    roots: () => roots(ipc, options.dataDir),
    close: () => Promise.resolve(),
  };
}

function coreBackend(options: BackendOptions): McpBackend {
  const store = createConfSettingsStore(options.dataDir);
  const profileId = options.profile === undefined ? null : findProfile(store, options.profile);
  const app = createApp({
    dataDir: options.dataDir,
    platform: browserPlatform,
    version: options.version,
    mediaUrlPrefix: HTTP_IPC.localMediaPrefix,
    // `--profile` is this server's choice alone: the app's stored active profile is left as it is.
    settingsStore: profileId === null ? store : withActiveProfile(store, profileId),
    logger: options.logger,
    ...(options.keyStore === undefined ? {} : { keyStore: options.keyStore }),
    program: 'clipdesk mcp',
  });
  const ipc: IpcClient = createRouterClient(app.router, { context: { transport: 'http' } });
  options.logger.info({ dataDir: options.dataDir }, 'running the core in this process');
  return {
    ipc,
    via: 'core',
    dataDir: options.dataDir,
    roots: () => roots(ipc, options.dataDir),
    close: () => app.dispose(),
  };
}

function findProfile(store: SettingsStore, name: string): string {
  const found = store.get('profiles').find((p) => p.id === name || p.name === name);
  if (!found) throw new BackendError('not_found', `No profile named ${name}`);
  return found.id;
}

/** The settings file, with the active profile kept in memory for this process. */
function withActiveProfile(store: SettingsStore, id: string): SettingsStore {
  let active = id;
  return {
    get path() {
      return store.path;
    },
    get: (key) => (key === 'activeId' ? active : store.get(key)) as never,
    set: (key, value) => {
      if (key === 'activeId') active = value as string;
      else store.set(key, value);
    },
  };
}

async function roots(ipc: IpcClient, dataDir: string): Promise<string[]> {
  const settings = await ipc.settings.get();
  // The app's media folder (composition-root.ts): previews, last frames, trimmed shots; images
  // are in the pictures folder while the download folder is the default one.
  return [path.resolve(settings.downloadDir), path.resolve(imageDownloadDir(settings)), path.resolve(dataDir, 'media')];
}
