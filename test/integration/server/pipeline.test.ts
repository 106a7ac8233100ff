import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_NAMES, PipelineError, runPipeline } from '../../../server/pipeline/index.ts';
import { liveProcessCount, probe, runFfmpeg } from '../../../shared/node/ffmpeg.ts';

let root: string;
let videoMaster: string;
let imageMaster: string;
let n = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'clipdesk-pipeline-'));
  videoMaster = join(root, 'master.mp4');
  imageMaster = join(root, 'master.png');
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=320x180:rate=24',
    '-frames:v',
    '48',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-f',
    'mp4',
    '-y',
    videoMaster,
  ]);
  await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=300x200', '-frames:v', '1', '-y', imageMaster]);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function workDir(): Promise<string> {
  const dir = join(root, `work-${n++}`);
  await (await import('node:fs/promises')).mkdir(dir);
  return dir;
}

/** The byte offset of a top-level MP4 box, to check that moov precedes mdat (+faststart). */
async function boxOffset(path: string, type: string): Promise<number> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    let offset = 0;
    const header = Buffer.alloc(8);
    while (offset + 8 <= size) {
      await fh.read(header, 0, 8, offset);
      if (header.toString('latin1', 4, 8) === type) return offset;
      const boxSize = header.readUInt32BE(0);
      if (boxSize < 8) break;
      offset += boxSize;
    }
    return -1;
  } finally {
    await fh.close();
  }
}

describe('video pipeline', () => {
  it('writes MP4/H.264 with faststart, WebM/VP9 and a JPEG thumbnail, and probes the result', async () => {
    const dir = await workDir();
    const result = await runPipeline({
      kind: 'video',
      master: videoMaster,
      workDir: dir,
      signal: new AbortController().signal,
    });
    expect(result.formats.map((f) => f.mime)).toEqual(['video/mp4', 'video/webm']);
    expect(result).toMatchObject({ width: 320, height: 180 });
    expect(result.duration).toBeCloseTo(2, 1);

    const [mp4, webm] = result.formats;
    expect(mp4!.path).toBe(join(dir, OUTPUT_NAMES.mp4));
    expect(mp4!.bytes).toBeGreaterThan(0);
    expect(await probe(mp4!.path)).toMatchObject({
      videoCodec: 'h264',
      pixelFormat: 'yuv420p',
      width: 320,
      height: 180,
    });
    const moov = await boxOffset(mp4!.path, 'moov');
    expect(moov).toBeGreaterThan(0);
    expect(moov).toBeLessThan(await boxOffset(mp4!.path, 'mdat'));

    const w = await probe(webm!.path);
    expect(w).toMatchObject({ videoCodec: 'vp9', width: 320, height: 180 });
    expect(w.formatName).toContain('webm');
    expect(w.durationSeconds).toBeCloseTo(2, 1);

    expect(result.thumbnail.mime).toBe('image/jpeg');
    expect(await probe(result.thumbnail.path)).toMatchObject({ videoCodec: 'mjpeg', width: 320 });
    expect((await readdir(dir)).sort()).toEqual([OUTPUT_NAMES.thumbnail, OUTPUT_NAMES.mp4, OUTPUT_NAMES.webm].sort());
  });

  it('abort mid-transcode kills ffmpeg and removes every file of the run', async () => {
    // A longer master, so the VP9 encode is surely still running when the abort comes.
    const longMaster = join(root, 'long.mp4');
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=24',
      '-frames:v',
      '480',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-f',
      'mp4',
      '-y',
      longMaster,
    ]);
    const dir = await workDir();
    const ac = new AbortController();
    const run = runPipeline({ kind: 'video', master: longMaster, workDir: dir, signal: ac.signal });
    for (let i = 0; i < 1000 && liveProcessCount() < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(liveProcessCount()).toBeGreaterThanOrEqual(1);
    ac.abort();
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PipelineError);
    expect((err as PipelineError).aborted).toBe(true);
    expect(liveProcessCount()).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it('a master that is not media fails clearly', async () => {
    const dir = await workDir();
    const bogus = join(dir, 'bogus.mp4');
    await (await import('node:fs/promises')).writeFile(bogus, 'nope');
    const err = await runPipeline({
      kind: 'video',
      master: bogus,
      workDir: dir,
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PipelineError);
    expect((err as PipelineError).aborted).toBe(false);
    expect(await readdir(dir)).toEqual(['bogus.mp4']);
  });
});

describe('image pipeline', () => {
  it('keeps the PNG primary and adds WebP and a JPEG thumbnail', async () => {
    const dir = await workDir();
    const result = await runPipeline({
      kind: 'image',
      master: imageMaster,
      workDir: dir,
      signal: new AbortController().signal,
    });
    expect(result.formats.map((f) => f.mime)).toEqual(['image/png', 'image/webp']);
    expect(result).toMatchObject({ width: 300, height: 200, duration: 0 });
    expect(await probe(result.formats[0]!.path)).toMatchObject({ videoCodec: 'png', width: 300, height: 200 });
    expect(await probe(result.formats[1]!.path)).toMatchObject({ videoCodec: 'webp', width: 300, height: 200 });
    expect(await probe(result.thumbnail.path)).toMatchObject({ videoCodec: 'mjpeg', width: 300 });
  });
});
