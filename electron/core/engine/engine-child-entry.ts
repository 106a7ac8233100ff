/**
 * The Local engine's own process: the service, started on loopback with the options the app sends,
 * answering the app's calls to its admin and provider methods. Started by engine-host.ts as a
 * Node child (child_process.fork: browser mode, the CLI, tests) or, in the packaged app, as an
 * Electron utility process (its RunAsNode fuse is off, so fork cannot run Node there).
 *
 * It lives exactly as long as the app wants it: it exits when told to close, and when its parent
 * goes away (the channel closes), after stopping its renders, so a crashed app leaves no engine
 * or ffmpeg behind.
 */
import { startService, type RunningService } from '../../../server/index.ts';
import { packagedMediaBinaries, useBundledMediaBinaries } from '../../../shared/node/ffmpeg.ts';
import { onceShutdown } from '../../../shared/node/shutdown.ts';
import {
  ENGINE_METHODS,
  ENGINE_STATS,
  toWireError,
  type EngineMethod,
  type FromEngine,
  type ToEngine,
} from './protocol.ts';

interface ParentPort {
  send(message: FromEngine): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The app went away: its channel closed. */
  onGone(listener: () => void): void;
}

/** Electron's utility process has `process.parentPort`; a Node child has `process.send`. */
function parentPort(): ParentPort {
  const electronPort = (process as { parentPort?: Electronish }).parentPort;
  if (electronPort) {
    // The packaged app's utility process: its renders use the build in resources/bin as the main
    // process does (docs/architecture.md, "Bundled ffmpeg").
    useBundledMediaBinaries(packagedMediaBinaries((process as { resourcesPath?: string }).resourcesPath));
    return {
      send: (m) => electronPort.postMessage(m),
      onMessage: (l) => electronPort.on('message', (e: { data: unknown }) => l(e.data)),
      // A utility process is killed with its parent; nothing to watch.
      onGone: () => undefined,
    };
  }
  if (!process.send) throw new Error('engine-child-entry runs only as a child of the app (no IPC channel)');
  return {
    send: (m) => {
      // A parent that is already gone cannot be told; the 'disconnect' handler is closing us.
      if (process.connected) process.send!(m);
    },
    onMessage: (l) => process.on('message', l),
    onGone: (l) => process.once('disconnect', l),
  };
}

interface Electronish {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (e: { data: unknown }) => void): void;
}

const port = parentPort();
let service: RunningService | null = null;
let starting: Promise<void> | null = null;

const logger = {
  info: (message: string) => port.send({ type: 'log', level: 'info', message }),
  warn: (message: string) => port.send({ type: 'log', level: 'warn', message }),
  error: (message: string) => port.send({ type: 'log', level: 'error', message }),
};

const stop = onceShutdown(
  async () => {
    await starting?.catch(() => undefined);
    // The embedded engine quits at once: renders are killed, async generations stay queued for
    // the next start, remote jobs stay recorded (RunningService.close).
    await service?.close();
  },
  { onError: (error) => logger.error(`the Local engine did not close cleanly: ${String(error)}`) },
);

async function closeAndExit(): Promise<void> {
  await stop();
  port.send({ type: 'closed' });
  // Let the 'closed' message leave before the process goes.
  setImmediate(() => process.exit(0));
}

port.onGone(() => void closeAndExit());
// Ctrl-C in a terminal reaches the whole process group: the app, which then closes this engine
// in order. A SIGTERM sent to the engine alone closes it the same way.
process.on('SIGINT', () => undefined);
process.once('SIGTERM', () => void closeAndExit());

port.onMessage((raw) => {
  const m = raw as ToEngine;
  switch (m?.type) {
    case 'start':
      if (starting) return;
      starting = startService({ ...m.options, logger }).then(
        (s) => {
          service = s;
          port.send({ type: 'started', url: s.url, host: s.host, port: s.port });
        },
        (error: unknown) => {
          port.send({ type: 'failed', error: toWireError(error) });
          setImmediate(() => process.exit(1));
        },
      );
      return;
    case 'call': {
      const s = service;
      const method = (ENGINE_METHODS as readonly string[]).includes(m.method) ? m.method : null;
      if (!s || !method || !Array.isArray(m.args)) {
        port.send({
          type: 'result',
          id: m.id,
          ok: false,
          error: {
            name: 'Error',
            message: s ? `unknown engine method ${String(m.method)}` : 'the engine is not started',
          },
        });
        return;
      }
      const methods = s as unknown as Partial<Record<EngineMethod, (...args: unknown[]) => Promise<unknown>>>;
      const run = methods[method];
      if (typeof run !== 'function') {
        // A service build without a method the app knows: an error for that call, not a crash.
        const message = `this Local engine has no method ${method}`;
        port.send({ type: 'result', id: m.id, ok: false, error: { name: 'Error', message } });
        return;
      }
      run.apply(s, m.args).then(
        (value) => port.send({ type: 'result', id: m.id, ok: true, value }),
        (error: unknown) => port.send({ type: 'result', id: m.id, ok: false, error: toWireError(error) }),
      );
      return;
    }
    case 'stat': {
      const s = service;
      if (!s || !(ENGINE_STATS as readonly string[]).includes(m.stat)) {
        port.send({ type: 'result', id: m.id, ok: false, error: { name: 'Error', message: 'no such engine stat' } });
        return;
      }
      port.send({ type: 'result', id: m.id, ok: true, value: s.stats[m.stat](m.user, m.kind) });
      return;
    }
    case 'close':
      void closeAndExit();
      return;
    default:
      logger.warn(`the Local engine ignored a message it does not know (${String((m as { type?: unknown })?.type)})`);
  }
});
