import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../server/pipeline/index.ts';
import { createLocalProviders, findModel } from '../server/providers/index.ts';
import { reportFigure } from './support/report.ts';

/**
 * Capacity on paper (docs/scaling.md): the CPU a node spends per second of video the
 * Local engine's procedural providers make, render and pipeline (MP4, WebM/VP9, thumbnail)
 * together, at 1080p and 720p. CPU time is read from the kernel's account of this process's
 * finished children (/proc/self/stat cutime + cstime: ffmpeg under its watchdog), so it counts
 * what the renders cost, not how long they waited for a core. The ratio beside it is CPU time over
 * wall time: how many cores a render kept busy.
 */
const SECONDS = 8;
const ROUNDS = 2;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function childCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of stat (cutime, cstime) are at 13 and 14 after the command name.
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

export default async function (): Promise<void> {
  if (process.platform !== 'linux') {
    console.log('# service-render-cpu: reads /proc; Linux only');
    return;
  }
  const root = await mkdtemp(join(tmpdir(), 'clipdesk-bench-render-cpu-'));
  try {
    const model = findModel('clipdesk/motion')!;
    // Prism: the one provider that renders motion at 1080p (the catalog's default size).
    const [prism] = createLocalProviders().filter((p) => p.slug === 'prism');
    for (const [label, width, height] of [
      ['1080p', 1920, 1080],
      ['720p', 1280, 720],
    ] as const) {
      let cpu = 0;
      let wall = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const workDir = join(root, `${label}-${round}`);
        await mkdir(workDir);
        const signal = new AbortController().signal;
        const cpuBefore = childCpuSeconds();
        const t = performance.now();
        const master = await prism!.render({
          kind: 'video',
          model: model.canonicalId,
          prompt: 'benchmark: a slow orbit over a glowing city',
          seed: 1234 + round,
          width,
          height,
          durationSeconds: SECONDS,
          workDir,
          signal,
        });
        await runPipeline({ kind: 'video', master: master.path, workDir, signal });
        wall += (performance.now() - t) / 1000;
        cpu += childCpuSeconds() - cpuBefore;
      }
      const perSecond = cpu / (ROUNDS * SECONDS);
      reportFigure(
        `service-render-cpu-${label}`,
        perSecond,
        'cpu-s per s of video',
        cpu / wall,
        `wall time: cores kept busy while rendering (${ROUNDS} × ${SECONDS} s clips, ${wall.toFixed(1)} s wall)`,
      );
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
