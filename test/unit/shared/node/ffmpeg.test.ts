import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FfmpegError,
  ffmpegPath,
  ffprobePath,
  killAll,
  liveProcessCount,
  pathPair,
  probe,
  runFfmpeg,
} from '../../../../shared/node/ffmpeg.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-ffmpeg-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const smallClip = (out: string, seconds = 1) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc2=size=160x90:rate=10:duration=${seconds}`,
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-pix_fmt',
  'yuv420p',
  '-threads',
  '1',
  '-y',
  out,
];

describe('binary paths', () => {
  it('prefer an explicit path, then the environment, then the PATH pair or the npm package', () => {
    expect(ffmpegPath('/opt/ff/ffmpeg')).toBe('/opt/ff/ffmpeg');
    const saved = process.env['CLIPDESK_FFPROBE'];
    process.env['CLIPDESK_FFPROBE'] = '/env/ffprobe';
    try {
      expect(ffprobePath()).toBe('/env/ffprobe');
      expect(ffprobePath('/x/ffprobe')).toBe('/x/ffprobe');
    } finally {
      if (saved === undefined) delete process.env['CLIPDESK_FFPROBE'];
      else process.env['CLIPDESK_FFPROBE'] = saved;
    }
    // A consistent pair on the PATH comes before the npm build (ffmpeg-choice.test.ts).
    if (!process.env['CLIPDESK_FFMPEG']) {
      const pair = pathPair();
      if (pair) expect(ffmpegPath()).toBe(pair.ffmpegPath);
      else expect(ffmpegPath()).toMatch(/@ffmpeg-installer/);
    }
  });
});

describe('runFfmpeg and probe', () => {
  it('renders a clip, reports progress up to 1, and probe reads it back', async () => {
    const out = join(dir, 'a.mp4');
    const seen: number[] = [];
    await runFfmpeg(smallClip(out, 2), { totalSeconds: 2, onProgress: (f) => seen.push(f) });
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((f, i) => i === 0 || f >= seen[i - 1]!)).toBe(true);
    const info = await probe(out);
    expect(info).toMatchObject({ width: 160, height: 90, videoCodec: 'h264', hasVideo: true, pixelFormat: 'yuv420p' });
    expect(info.formatName).toContain('mp4');
    expect(info.durationSeconds).toBeCloseTo(2, 1);
    expect(info).toMatchObject({ hasAudio: false, audioCodec: '' });
  });

  it('probe reports the first audio stream and its codec', async () => {
    const out = join(dir, 'tone.mp4');
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=160x90:rate=10:duration=1',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-y',
      out,
    ]);
    expect(await probe(out)).toMatchObject({ hasVideo: true, videoCodec: 'h264', hasAudio: true, audioCodec: 'aac' });
  });

  it('rejects with the tail of stderr when ffmpeg fails', async () => {
    const err = await runFfmpeg(['-i', join(dir, 'missing.png'), '-y', join(dir, 'x.png')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    const e = err as FfmpegError;
    expect(e.failure).toBe('exit');
    expect(e.stderrTail).toMatch(/No such file or directory/);
    expect(e.message).toMatch(/missing\.png/);
  });

  it('rejects clearly when the binary does not exist', async () => {
    const err = await runFfmpeg(['-version'], { ffmpegPath: join(dir, 'no-ffmpeg') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as FfmpegError).failure).toBe('spawn');
    expect(liveProcessCount()).toBe(0);
  });

  it('probe rejects a file that is not media', async () => {
    const { writeFile } = await import('node:fs/promises');
    const junk = join(dir, 'junk.bin');
    await writeFile(junk, 'not an image at all');
    await expect(probe(junk)).rejects.toBeInstanceOf(FfmpegError);
  });

  it('abort kills the process and waits for it to exit', async () => {
    const ac = new AbortController();
    const out = join(dir, 'endless.mp4');
    const run = runFfmpeg(
      [
        '-re',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=160x90:rate=10',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-y',
        out,
      ],
      {
        signal: ac.signal,
      },
    );
    await waitFor(() => liveProcessCount() === 1);
    ac.abort();
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FfmpegError);
    expect((err as FfmpegError).failure).toBe('aborted');
    expect((err as Error).name).toBe('AbortError');
    expect(liveProcessCount()).toBe(0);
  });

  it('an already aborted signal never starts a process', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(runFfmpeg(['-version'], { signal: ac.signal })).rejects.toMatchObject({ failure: 'aborted' });
  });

  it('timeout kills the process', async () => {
    const err = await runFfmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=10', '-f', 'null', '-'], {
      timeoutMs: 300,
    }).catch((e: unknown) => e);
    expect((err as FfmpegError).failure).toBe('timeout');
    expect(liveProcessCount()).toBe(0);
  });

  it('killAll stops every live process', async () => {
    const runs = [1, 2].map(() =>
      runFfmpeg(['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=10', '-f', 'null', '-']).catch(
        (e: unknown) => e,
      ),
    );
    await waitFor(() => liveProcessCount() === 2);
    await killAll();
    expect(liveProcessCount()).toBe(0);
    const errs = await Promise.all(runs);
    for (const e of errs) expect(e).toBeInstanceOf(FfmpegError);
    expect(await readdir(dir)).not.toContain('endless.mp4.partial');
  });
});

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error('condition not reached');
}
