import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../server/pipeline/index.ts';
import { createLocalProviders, findModel } from '../server/providers/index.ts';
import type { RenderJob } from '../server/providers/index.ts';
import { ffmpegPath } from '../shared/node/ffmpeg.ts';
import { reportFigure, timeMs } from './support/report.ts';

/**
 * Video generation through the Local engine (provider render → MP4 remux, WebM/VP9, thumbnail,
 * with the output checks and probes) against exactly the same ffmpeg commands run directly from
 * this script, in the same order and with the same parallelism. The commands are captured by
 * running the pipeline once through a recording wrapper around the real ffmpeg binary.
 * Goal: ≤ 1.1×. Both sides report their best of ROUNDS: other processes on the machine only ever
 * add time, so the minimum is the least noisy estimate of each.
 */
const ROUNDS = 5;

export default async function (): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'clipdesk-bench-gen-'));
  try {
    const real = ffmpegPath();
    const model = findModel('clipdesk/motion')!;
    const job = (workDir: string, ffmpeg: string): { render: RenderJob; ffmpeg: string } => ({
      ffmpeg,
      render: {
        kind: 'video',
        model: model.canonicalId,
        prompt: 'benchmark: a slow orbit over a glowing city',
        seed: 1234,
        width: 1280,
        height: 720,
        durationSeconds: 4,
        workDir,
        signal: new AbortController().signal,
      },
    });

    const throughPipeline = async (workDir: string, ffmpeg: string) => {
      const [studio] = createLocalProviders({ ffmpegPath: ffmpeg }).filter((p) => p.slug === 'studio');
      const j = job(workDir, ffmpeg);
      const master = await studio!.render(j.render);
      await runPipeline({ kind: 'video', master: master.path, workDir, signal: j.render.signal, ffmpegPath: ffmpeg });
    };

    // 1. Capture the commands.
    const recordDir = join(root, 'record');
    const captureDir = join(root, 'capture');
    await mkdir(recordDir);
    await mkdir(captureDir);
    const wrapper = join(root, 'ffmpeg-recorder.sh');
    await writeFile(
      wrapper,
      `#!/bin/sh\nf="${recordDir}/$(date +%s%N)-$$"\nfor a in "$@"; do printf '%s\\0' "$a"; done > "$f"\nexec "${real}" "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    await throughPipeline(captureDir, wrapper);
    const commands = await Promise.all(
      (await readdir(recordDir))
        .sort()
        .map(async (f) => (await readFile(join(recordDir, f), 'utf8')).split('\0').slice(0, -1)),
    );
    const output = (args: string[]) => args.at(-1) ?? '';
    const render = commands.find((a) => output(a).includes('master-'));
    const webm = commands.find((a) => output(a).endsWith('.webm.partial'));
    const mp4 = commands.find((a) => output(a).endsWith('video.mp4.partial'));
    const thumb = commands.find((a) => output(a).endsWith('.jpg.partial'));
    if (!render || !webm || !mp4 || !thumb)
      throw new Error(`could not identify the captured commands (${commands.length})`);

    // 2. Run both ways, alternating, and compare the best runs.
    const direct = async () => {
      await exec(real, render);
      await Promise.all([
        exec(real, webm),
        (async () => {
          await exec(real, mp4);
          await exec(real, thumb);
        })(),
      ]);
    };
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const dir = join(root, `run-${i}`);
      await mkdir(dir);
      ours.push(await timeMs(() => throughPipeline(dir, real)));
      theirs.push(await timeMs(direct));
      await rm(dir, { recursive: true, force: true });
    }
    if (process.env['BENCH_VERBOSE']) console.log({ ours, theirs });
    const oursMs = Math.min(...ours);
    const theirsMs = Math.min(...theirs);
    reportFigure(
      'service-generation-720p-4s',
      oursMs / 1000,
      's',
      oursMs / theirsMs,
      'the same ffmpeg commands run directly',
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function exec(binary: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}: ${args.join(' ')}`)),
    );
  });
}
