import { resolve } from 'node:path';
import { dataFolderOwner, waitForDataFolderOwner, type FolderOwner } from '../../../shared/node/data-folder-lock.ts';
import type { EngineProviderOptions, EngineProviders } from '../providers/index.ts';
import { storedEngineKeys, type EngineKeyStorage } from './engine-key.ts';
import {
  LOCAL_ENGINE_USER,
  startLocalEngine,
  type EngineService,
  type LocalEngine,
  type LocalEngineOptions,
} from './local-engine.ts';

/**
 * One engine per data folder (docs/architecture.md, "One engine per data folder"). The app, the
 * CLI and `clipdesk mcp` open the built-in engine here: when a live process already serves the
 * engine's data folder (the app, a CLI command, `clipdesk-service serve`), its loopback address is
 * used as a client, with the engine's stored key, instead of starting a second engine, which would
 * take the first one's running generations for a crash's orphans and run them again. Otherwise the
 * engine is started here and holds the folder's lock until it stops.
 *
 * Attached, the folder's lock is looked at every second; once its holder is gone (a CLI command's
 * engine ended, the app quit), the engine is started here, on the same port where it is free, so
 * the address the caller's client holds stays right, and it resumes what the last one left.
 */
export interface OpenEngineOptions extends LocalEngineOptions {
  /** The provider options a takeover starts the engine with: read then, so they are current. */
  providerOptions?: () => Promise<EngineProviderOptions>;
  /** Lines that say what a wait is for and how long it may take (the CLI's stderr, the app's log). */
  onWait?: (line: string) => void;
  /** The engine's address changed (a takeover on another port): the caller's clients must follow. */
  onUrlChange?: (url: string) => void;
  /** How long to wait for a starting owner to listen (default 60 s), and then for its key (at most 15 s). */
  ownerWaitMs?: number;
}

/** What an attached process cannot do to an engine another process runs, with what to do instead. */
export class EngineElsewhereError extends Error {
  constructor(what: string, owner: FolderOwner) {
    super(
      `${what} is done by the process that runs the Local engine: ${owner.program} (pid ${owner.pid}, ${owner.url ?? 'starting'}). ` +
        'Do it there, or once that process has stopped.',
    );
    this.name = 'EngineElsewhereError';
  }
}

const WATCH_MS = 1_000;

function isFolderInUse(error: unknown): boolean {
  return error instanceof Error && error.name === 'DataFolderInUseError';
}

export async function openLocalEngine(options: OpenEngineOptions): Promise<LocalEngine> {
  const dataDir = resolve(options.dataDir);
  const waitMs = options.ownerWaitMs ?? 60_000;
  // A start that loses the lock to another process starting at the same moment uses that one.
  for (let attempt = 0; ; attempt++) {
    const owner = await waitForDataFolderOwner(dataDir, waitMs, options.onWait);
    // Its key comes right after it listens: 15 s is plenty, and a key this process cannot read
    // (another key store) is said without a long wait.
    if (owner)
      return attached(owner, await ownerKey(owner, options, dataDir, Math.min(waitMs, 15_000)), options, dataDir);
    try {
      return await startLocalEngine(options);
    } catch (error) {
      if (!isFolderInUse(error) || attempt >= 3) throw error;
    }
  }
}

/**
 * The engine's stored key that the owner accepts (the keychain's, then the key file's). A new
 * owner makes its key right after it listens: waited for, up to `waitMs`.
 */
async function ownerKey(
  owner: FolderOwner & { url: string },
  options: OpenEngineOptions,
  dataDir: string,
  waitMs: number,
): Promise<{ key: string; storage: EngineKeyStorage }> {
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    for (const stored of await storedEngineKeys(options.secrets, dataDir)) {
      const res = await fetch(`${owner.url}/usage`, { headers: { authorization: `Bearer ${stored.key}` } }).catch(
        () => null,
      );
      await res?.body?.cancel();
      if (res?.ok) return stored;
    }
    // Only a Local engine makes its key on start; a `clipdesk-service serve` on the folder never will.
    if (Date.now() >= deadline || !owner.program.includes('Local engine'))
      throw new Error(
        `the Local engine on ${dataDir} runs in ${owner.program} (pid ${owner.pid}, ${owner.url}), but no key it accepts is stored ` +
          `in the keychain or in ${dataDir}/engine-key.json. Stop that process and run this again, or reach it with ` +
          '--base-url URL and CLIPDESK_API_KEY.',
      );
    if (!said) {
      said = true;
      options.onWait?.(
        `waiting up to ${Math.round(waitMs / 1000)} s for the Local engine in ${owner.program} (pid ${owner.pid}) to store its key`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The engine another process runs, used as a client; taken over here once that process is gone. */
function attached(
  first: FolderOwner & { url: string },
  stored: { key: string; storage: EngineKeyStorage },
  options: OpenEngineOptions,
  dataDir: string,
): LocalEngine {
  const logger = options.logger;
  let owner = first;
  let own: LocalEngine | null = null;
  let closed = false;
  let checking: Promise<void> | null = null;
  logger.info(
    { url: owner.url, ownerPid: owner.pid, program: owner.program },
    'using the Local engine another process runs',
  );

  const takeOver = async (): Promise<void> => {
    const state = dataFolderOwner(dataDir);
    if (state.held) {
      // Another process took the engine over first: its address is the one to use now.
      const moved = state.owner?.url && state.owner.url !== owner.url;
      if (state.owner?.url) owner = { ...state.owner, url: state.owner.url };
      if (moved) options.onUrlChange?.(owner.url);
      return;
    }
    logger.info({ ownerPid: owner.pid }, 'the process that ran the Local engine is gone; starting it here');
    const providers = options.providerOptions ? await options.providerOptions() : options.providers;
    const start = (port: number): Promise<LocalEngine> =>
      startLocalEngine({ ...options, port, ...(providers ? { providers } : {}) });
    try {
      own = await start(Number(new URL(owner.url).port));
    } catch (error) {
      if (isFolderInUse(error)) return; // another process took it first: the next look finds it
      if (!/EADDRINUSE/.test(String(error))) throw error;
      own = await start(0);
      options.onUrlChange?.(own.url);
    }
    if (closed) await own.close();
  };
  const timer = setInterval(() => {
    if (closed || own || checking) return;
    checking = takeOver()
      .catch((error: unknown) => logger.error({ err: error }, 'could not take the Local engine over'))
      .finally(() => (checking = null));
  }, WATCH_MS);
  timer.unref();

  const elsewhere = (what: string): Promise<never> => Promise.reject(new EngineElsewhereError(what, owner));
  const service = delegate<EngineService>(
    () => own?.service ?? null,
    (method) => elsewhere(method === 'syncCatalog' ? 'Refreshing the models' : `The engine's ${method}`),
  );
  const providers: EngineProviders = {
    ...delegate<EngineProviders>(
      () => own?.providers ?? null,
      () => elsewhere("Applying a provider's key or setting at once"),
    ),
    providerStatus: () => (own ? own.providers.providerStatus() : Promise.resolve([])),
    testProviderKey: (id, k) =>
      own
        ? own.providers.testProviderKey(id, k)
        : Promise.resolve({ ok: false, message: new EngineElsewhereError('Testing a provider key', owner).message }),
  };
  return {
    get url() {
      return own?.url ?? owner.url;
    },
    user: LOCAL_ENGINE_USER,
    get keyStorage() {
      return own?.keyStorage ?? stored.storage;
    },
    get owner() {
      return own ? null : owner;
    },
    getKey: () => own?.getKey() ?? stored.key,
    service,
    providers,
    pid: () => own?.pid() ?? owner.pid,
    async close() {
      closed = true;
      clearInterval(timer);
      await checking;
      await own?.close();
    },
  };
}

/**
 * An object whose methods call the engine run here once there is one, and `otherwise` meanwhile.
 * A Proxy, so every method of the interface is covered without listing them twice.
 */
function delegate<T extends object>(target: () => T | null, otherwise: (method: string) => Promise<never>): T {
  return new Proxy({} as T, {
    get(_, method) {
      // Never a thenable: an async function returning this object must not await it.
      if (typeof method !== 'string' || method === 'then') return undefined;
      const t = target() as Record<string, unknown> | null;
      if (t) {
        const value = t[method];
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      }
      return () => otherwise(method);
    },
  });
}
