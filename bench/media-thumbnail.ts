// A thumbnail through the media tools (direct spawn, registry, checks, temp file + rename)
// against the bare ffmpeg command with the same arguments; then a batch of 100 on 2 workers.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMediaTools } from '../electron/core/media/index.ts';
import { thumbnailArgs } from '../electron/core/media/operations.ts';
import { ffmpegArgs } from '../electron/core/media/run.ts';
import { resolveMediaBinaries } from '../shared/node/ffmpeg.ts';
import { percentile, reportFigure } from './support/report.ts';

const SINGLE_RUNS = 20;
const BATCH = 100;
const WORKERS = 2;
// Batches alternate and the best of each counts: the machine is shared, and noisy.
const BATCH_ROUNDS = 3;

export default async function (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-thumb-'));
  const { ffmpegPath } = resolveMediaBinaries();
  const video = join(dir, 'clip.mp4');
  const made = spawnSync(ffmpegPath, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x180:rate=15:duration=2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    video,
  ]);
  if (made.status !== 0) throw new Error('could not make the test clip');
  const tools = createMediaTools();
  const opts = { atSeconds: 1, width: 160 };
  const bare = (out: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        ffmpegPath,
        ffmpegArgs({ op: 'thumbnail', input: video, output: out, ...thumbnailArgs(opts) }, out),
        { stdio: 'ignore' },
      );
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}`))));
    });
  const ours = (out: string) => tools.thumbnail(video, out, opts);
  try {
    await ours(join(dir, 'warm.jpg')); // fluent-ffmpeg checks the formats once per process
    await bare(join(dir, 'warm-bare.jpg'));
    const oursMs: number[] = [];
    const bareMs: number[] = [];
    for (let i = 0; i < SINGLE_RUNS; i++) {
      let t = performance.now();
      await bare(join(dir, `b${i}.jpg`));
      bareMs.push(performance.now() - t);
      t = performance.now();
      await ours(join(dir, `o${i}.jpg`));
      oursMs.push(performance.now() - t);
    }
    const median = (xs: number[]) => percentile(xs, 50);
    reportFigure(
      'media-thumbnail',
      median(oursMs),
      'ms',
      median(oursMs) / median(bareMs),
      'bare ffmpeg, same arguments (goal ≤ 1.1)',
    );

    const batch = async (one: (out: string) => Promise<unknown>, prefix: string): Promise<number> => {
      let next = 0;
      const t = performance.now();
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          while (next < BATCH) await one(join(dir, `${prefix}${next++}.jpg`));
        }),
      );
      return BATCH / ((performance.now() - t) / 1000);
    };
    let bareRate = 0;
    let oursRate = 0;
    for (let round = 0; round < BATCH_ROUNDS; round++) {
      bareRate = Math.max(bareRate, await batch(bare, `bb${round}-`));
      oursRate = Math.max(oursRate, await batch(ours, `ob${round}-`));
    }
    reportFigure(
      'media-thumbnail-batch-100',
      oursRate,
      'thumbs/s',
      oursRate / bareRate,
      `bare ffmpeg, ${WORKERS} at a time, best of ${BATCH_ROUNDS} each`,
    );
  } finally {
    await tools.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}
