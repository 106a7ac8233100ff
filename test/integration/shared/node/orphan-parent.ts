// A parent for the watchdog test: starts an endless ffmpeg through the runner (`direct`) or
// through fluent-ffmpeg (`fluent`), says so on stdout (with the shared reaper's pid), and waits to
// be SIGKILLed. `direct-at-spawn` SIGKILLs itself in the worst instant instead: as soon as
// spawn() has returned the run's process, before the runner's next statement, after printing
// `spawned PID`.
import childProcess from 'node:child_process';
import { writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import ffmpeg from 'fluent-ffmpeg';
import { ffmpegPath, processRegistry, runFfmpeg, runFluent } from '../../../../shared/node/ffmpeg.ts';
import { reaperPid } from '../../../../shared/node/ffmpeg/watchdog.ts';

const [mode, marker] = process.argv.slice(2);
if (!marker) throw new Error('usage: orphan-parent.ts direct|fluent|direct-at-spawn MARKER');
if (mode === 'direct-at-spawn') {
  const realSpawn = childProcess.spawn;
  childProcess.spawn = ((...args: Parameters<typeof realSpawn>) => {
    const child = realSpawn(...args);
    if (JSON.stringify(args).includes(marker)) {
      writeSync(1, `spawned ${child.pid}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
    return child;
  }) as typeof realSpawn;
  // The runner imported `spawn` as a named binding: this makes that binding the one above.
  syncBuiltinESMExports();
}
const endless = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=10'];
const output = ['-metadata', `title=${marker}`, '-f', 'null', '-'];
const run =
  mode === 'fluent'
    ? runFluent(
        ffmpeg()
          .input('testsrc2=size=160x90:rate=10')
          .inputOptions(['-re', '-f', 'lavfi'])
          .output('-')
          .outputOptions(output.slice(0, -1)),
        ffmpegPath(),
        {},
      )
    : runFfmpeg([...endless, ...output]);
run.catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
const poll = setInterval(() => {
  if (processRegistry.list().some((p) => p.started())) {
    clearInterval(poll);
    process.stdout.write(`running reaper=${reaperPid() ?? 'none'}\n`);
  }
}, 10);
