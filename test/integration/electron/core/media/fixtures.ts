import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveMediaBinaries } from '../../../../../shared/node/ffmpeg.ts';
import { reaperPid } from '../../../../../shared/node/ffmpeg/watchdog.ts';

export interface MediaFixtures {
  dir: string;
  video: string;
  longVideo: string;
  image: string;
  zeroByte: string;
  truncated: string;
  corrupt: string;
  garbage: string;
  text: string;
  audioOnly: string;
  missing: string;
}

function ffmpeg(args: string[]): void {
  const r = spawnSync(resolveMediaBinaries().ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-y', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`fixture ffmpeg failed: ${r.stderr}`);
}

/** Tiny inputs (320x180, 1–2 s): good ones, and every kind of bad one. */
export function makeMediaFixtures(): MediaFixtures {
  const dir = mkdtempSync(join(tmpdir(), 'clipdesk-media-'));
  const video = join(dir, 'clip.mp4');
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x180:rate=15:duration=1',
    '-f',
    'lavfi',
    '-i',
    'sine=duration=1',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    video,
  ]);
  const longVideo = join(dir, 'long.mp4');
  ffmpeg([
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
    longVideo,
  ]);
  const image = join(dir, 'still.png');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=1:duration=1', '-frames:v', '1', image]);
  const audioOnly = join(dir, 'tone.m4a');
  ffmpeg(['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'aac', audioOnly]);

  const bytes = readFileSync(video);
  const zeroByte = join(dir, 'empty.mp4');
  writeFileSync(zeroByte, Buffer.alloc(0));
  const truncated = join(dir, 'truncated.mp4');
  writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 3)));
  // A real MP4 whose boxes after the first 32 bytes are overwritten: the header says MP4, the rest is noise.
  const corrupt = join(dir, 'corrupt.mp4');
  const smashed = Buffer.from(bytes);
  let seed = 42;
  for (let i = 32; i < smashed.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    smashed[i] = seed & 0xff;
  }
  writeFileSync(corrupt, smashed);
  const garbage = join(dir, 'noise.webm');
  writeFileSync(garbage, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) & 0xff)));
  const text = join(dir, 'notes.mp4');
  writeFileSync(text, 'this is a text file, not a video\n'.repeat(20));
  return {
    dir,
    video,
    longVideo,
    image,
    zeroByte,
    truncated,
    corrupt,
    garbage,
    text,
    audioOnly,
    missing: join(dir, 'nope.mp4'),
  };
}

/** Child processes of this process, with their state (Z = zombie). Linux /proc. */
export function childProcesses(): { pid: number; state: string; name: string }[] {
  const children: { pid: number; state: string; name: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const [state, ppid] = stat.slice(close + 2).split(' ');
    // The runner's one shared reaper lives as long as this process, on purpose.
    if (Number(ppid) === process.pid && Number(entry) !== reaperPid())
      children.push({ pid: Number(entry), state: state ?? '?', name });
  }
  return children;
}

/**
 * Processes (any parent: an orphan is reparented) whose command line mentions `text`, such as a
 * fixture folder. ffmpeg runs under a watchdog shell, so it is a grandchild, not a child.
 */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}
