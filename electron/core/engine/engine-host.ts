import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../../../shared/node/child-env.ts';
import type { RunningService } from '../../../server/index.ts';
import type { MediaKind } from '../../../shared/api/index.ts';
import {
  fromWireError,
  isFromEngine,
  type EngineMethod,
  type EngineStartOptions,
  type EngineStat,
  type FromEngine,
  type ToEngine,
} from './protocol.ts';

/**
 * The app's side of the Local engine's own process: starts it, calls into it, and learns when it
 * ends. How the process is made is a parameter (`EngineSpawner`): a Node child here, an Electron
 * utility process in the packaged app (electron/main, which alone may import Electron).
 */
export interface EngineChild {
  readonly pid: number | undefined;
  send(message: ToEngine): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Once, when the process has ended, however it ended. */
  onExit(listener: (code: number | null) => void): void;
  kill(): void;
}

export type EngineSpawner = (entry: string) => EngineChild;

/**
 * The engine's entry: the TypeScript source beside this module when the sources run directly
 * (Node 22 strips types), the bundle `dist/electron/local-engine.mjs` when this module is bundled
 * (main.cjs in dist/electron, the CLI in dist/cli: both reach it as ../electron/).
 */
export function engineEntry(moduleUrl: string = import.meta.url): string {
  return fileURLToPath(
    moduleUrl.endsWith('.ts')
      ? new URL('./engine-child-entry.ts', moduleUrl)
      : new URL('../electron/local-engine.mjs', moduleUrl),
  );
}

/**
 * What the engine's process may read from its environment, beside the base every program gets
 * (shared/node/child-env.ts): which ffmpeg to run, and how to reach the providers from behind a
 * proxy or a private certificate authority. Not the parent's keys or passphrase: the providers'
 * keys cross in the start message, and only those (docs/security.md).
 */
const ENGINE_VARIABLES = [
  'CLIPDESK_FFMPEG',
  'CLIPDESK_FFPROBE',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'NODE_USE_ENV_PROXY',
];

/** The engine process's environment: explicit, with nothing of the parent's but ENGINE_VARIABLES and the base. */
export function engineEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return childEnv(ENGINE_VARIABLES, env);
}

/** A plain Node child with an IPC channel: browser mode, the CLI and tests. */
export const nodeEngineSpawner: EngineSpawner = (entry) => {
  const child = fork(entry, [], {
    // Not the parent's flags: a test runner's or inspector's flags are not the engine's.
    execArgv: [],
    env: engineEnv(),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  let exited = false;
  child.on('error', () => undefined); // a failed send to a dead child; its exit is reported below
  child.once('exit', () => (exited = true));
  return {
    get pid() {
      return child.pid;
    },
    send: (m) => {
      if (!exited && child.connected) child.send(m);
    },
    onMessage: (l) => child.on('message', l),
    onExit: (l) => {
      if (exited) l(child.exitCode);
      else child.once('exit', (code) => l(code));
    },
    kill: () => {
      if (!exited) child.kill('SIGKILL');
    },
  };
};

export interface EngineProcess {
  /** `http://127.0.0.1:PORT/v1` */
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  call<M extends EngineMethod>(method: M, ...args: Parameters<RunningService[M]>): ReturnType<RunningService[M]>;
  stat(stat: EngineStat, user: string, kind: MediaKind): Promise<number>;
  /** Once, when the process ends without having been asked to close (a crash, a kill). */
  onCrash(listener: (code: number | null) => void): void;
  /** Asks the engine to close (renders stop, the database closes) and waits for its exit; kills it after `timeoutMs`. */
  close(timeoutMs?: number): Promise<void>;
}

export interface EngineProcessOptions {
  spawner?: EngineSpawner;
  entry?: string;
  /** Where the engine's log lines go. */
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** A start that takes longer fails (and the process is killed). Default 60 s: a first start migrates the database. */
  startTimeoutMs?: number;
}

export class EngineGoneError extends Error {
  constructor(message = 'the Local engine stopped') {
    super(message);
    this.name = 'EngineGoneError';
  }
}

export function startEngineProcess(options: EngineStartOptions, o: EngineProcessOptions): Promise<EngineProcess> {
  const child = (o.spawner ?? nodeEngineSpawner)(o.entry ?? engineEntry());
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closing = false;
  let ended = false;
  const crashListeners: Array<(code: number | null) => void> = [];
  const exited = new Promise<number | null>((resolve) => child.onExit(resolve));

  return new Promise<EngineProcess>((resolveStart, rejectStart) => {
    let started = false;
    const timer = setTimeout(() => {
      if (started) return;
      child.kill();
      rejectStart(new EngineGoneError(`the Local engine did not start within ${o.startTimeoutMs ?? 60_000} ms`));
    }, o.startTimeoutMs ?? 60_000);

    const request = (message: ToEngine & { id: number }): Promise<unknown> =>
      new Promise((resolve, reject) => {
        if (ended) return reject(new EngineGoneError());
        pending.set(message.id, { resolve, reject });
        child.send(message);
      });

    child.onMessage((raw) => {
      if (!isFromEngine(raw)) {
        o.log('warn', 'the Local engine sent a message the app does not know; ignored');
        return;
      }
      const m: FromEngine = raw;
      switch (m.type) {
        case 'log':
          o.log(m.level, m.message);
          return;
        case 'started':
          started = true;
          clearTimeout(timer);
          resolveStart(engineProcess(m.url, m.port));
          return;
        case 'failed':
          clearTimeout(timer);
          rejectStart(fromWireError(m.error));
          return;
        case 'result': {
          const p = pending.get(m.id);
          if (!p) return;
          pending.delete(m.id);
          if (m.ok) p.resolve(m.value);
          else p.reject(fromWireError(m.error));
          return;
        }
        case 'closed':
          return;
      }
    });

    child.onExit((code) => {
      ended = true;
      clearTimeout(timer);
      for (const p of pending.values()) p.reject(new EngineGoneError());
      pending.clear();
      if (!started) {
        rejectStart(new EngineGoneError(`the Local engine exited (code ${code}) before it started`));
        return;
      }
      if (!closing) for (const l of crashListeners) l(code);
    });

    child.send({ type: 'start', options });

    function engineProcess(url: string, port: number): EngineProcess {
      return {
        url,
        port,
        pid: child.pid,
        call: ((method: EngineMethod, ...args: unknown[]) =>
          request({ type: 'call', id: nextId++, method, args })) as EngineProcess['call'],
        stat: (stat, user, kind) => request({ type: 'stat', id: nextId++, stat, user, kind }) as Promise<number>,
        onCrash: (l) => crashListeners.push(l),
        async close(timeoutMs = 20_000) {
          if (ended) return;
          closing = true;
          child.send({ type: 'close' });
          const killer = setTimeout(() => child.kill(), timeoutMs);
          try {
            await exited;
          } finally {
            clearTimeout(killer);
          }
        },
      };
    }
  });
}
