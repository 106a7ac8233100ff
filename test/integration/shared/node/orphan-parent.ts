// A parent for the watchdog test: starts an endless ffmpeg through the runner (`direct`) or
// through fluent-ffmpeg (`fluent`), says so on stdout (with the shared reaper's pid), and waits to
// be SIGKILLed.
import ffmpeg from 'fluent-ffmpeg';
import { ffmpegPath, processRegistry, runFfmpeg, runFluent } from '../../../../shared/node/ffmpeg.ts';
import { reaperPid } from '../../../../shared/node/ffmpeg/watchdog.ts';

const [mode, marker] = process.argv.slice(2);
if (!marker) throw new Error('usage: orphan-parent.ts direct|fluent MARKER');
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
