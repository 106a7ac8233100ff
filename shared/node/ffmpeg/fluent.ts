import type { FfmpegCommand } from 'fluent-ffmpeg';
import { FfmpegError, stderrTail } from './errors.ts';
import { checkBinary, runFailure, superviseRun } from './process.ts';
import type { RunControl } from './process.ts';
import { fluentBinary, watchdogAvailable } from './watchdog.ts';
import { toolEnv } from '../child-env.ts';

type SpawnFfmpeg = (this: FfmpegCommand, args: string[], options: unknown, ...callbacks: unknown[]) => unknown;

/**
 * fluent-ffmpeg has no option for its children's environment: they would get this process's
 * whole one, keys and passphrase included (shared/node/child-env.ts). Every spawn it makes, its
 * capability checks too, goes through `_spawnFfmpeg(args, options?, processCB?, endCB)`, whose
 * options go to `child_process.spawn` as they are; this command's own copy adds the environment.
 * The package is no longer developed, so the method stays; test/integration/shared/node/child-env.test.ts
 * reads the spawned process's environment and fails if it did not.
 */
function withToolEnv(command: FfmpegCommand): void {
  const internal = command as unknown as { _spawnFfmpeg: SpawnFfmpeg };
  const original = internal._spawnFfmpeg;
  internal._spawnFfmpeg = function (this: FfmpegCommand, args, options, ...callbacks) {
    // Called without options, the callbacks move up one place.
    if (typeof options === 'function') return original.call(this, args, { env: toolEnv() }, options, ...callbacks);
    return original.call(this, args, { ...(options as object), env: toolEnv() }, ...callbacks);
  };
}

/**
 * Runs a command built with fluent-ffmpeg (the product's command builder for preview, transcode
 * and export) under the same registry, abort, timeout and watchdog as every other run, through
 * its public API only: `setFfmpegPath`, `run`, `kill` and its events.
 */
export async function runFluent(command: FfmpegCommand, ffmpegPath: string, control: RunControl): Promise<void> {
  if (control.signal?.aborted) throw new FfmpegError('ffmpeg was cancelled before it started', 'aborted', null, '');
  await checkBinary(ffmpegPath);
  command.setFfmpegPath(await fluentBinary(ffmpegPath));
  withToolEnv(command);
  // Through the watchdog, SIGTERM makes it SIGKILL ffmpeg; bare (Windows), kill ffmpeg directly.
  const run = superviseRun(control, 'ffmpeg', () => command.kill(watchdogAvailable ? 'SIGTERM' : 'SIGKILL'));
  command.on('start', () => run.started());
  command.on('stderr', (line: string) => run.stderrChunk(`${line}\n`));
  const { error, code, signal } = await new Promise<{
    error: Error | null;
    code: number | null;
    signal: string | null;
  }>((resolve) => {
    // fluent-ffmpeg emits these once the process has exited and its stderr has closed.
    command.on('end', () => resolve({ error: null, code: 0, signal: null }));
    command.on('error', (err: Error) => {
      const exit = /exited with code (\d+)/.exec(err.message);
      const killed = /killed with signal (\w+)/.exec(err.message);
      resolve({ error: err, code: exit ? Number(exit[1]) : null, signal: killed?.[1] ?? null });
    });
    command.run();
  });
  const { stopped, stderr } = run.finish();
  if (!stopped && error && code === null && signal === null) {
    // Not an exit of ffmpeg: it could not be spawned, or a check of fluent-ffmpeg's failed.
    const spawnFailed = /ENOENT|EACCES|spawn/i.test(error.message);
    throw new FfmpegError(`ffmpeg failed: ${error.message}`, spawnFailed ? 'spawn' : 'exit', null, stderrTail(stderr));
  }
  const failure = runFailure('ffmpeg', control, { stopped, stderr, code, signal });
  if (failure) throw failure;
}
