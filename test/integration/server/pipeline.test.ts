import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT_NAMES, PipelineError, runPipeline } from '../../../server/pipeline/index.ts';
import { liveProcessCount, probe, runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import { mediaStreams } from '../../support/media-streams.ts';

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

    // A silent master makes silent files: no audio stream is invented.
    expect(await probe(videoMaster)).toMatchObject({ hasAudio: false, audioCodec: '' });
    expect((await mediaStreams(mp4!.path)).audioStreams).toBe(0);
    expect((await mediaStreams(webm!.path)).audioStreams).toBe(0);
  });

  /** A 2 s, 24 fps master whose sound is a 440 Hz tone (as long, unless told), in the given codec. */
  async function toneMaster(name: string, audio: string[], soundSeconds = 2): Promise<string> {
    const path = join(root, name);
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      // Both sources end by themselves: -frames:v would stop the file before the sound's tail is written.
      'testsrc2=size=320x180:rate=24:duration=2',
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:sample_rate=44100:duration=${soundSeconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      ...audio,
      '-f',
      'mp4',
      '-y',
      path,
    ]);
    return path;
  }

  const FRAME = 1 / 24;

  it('keeps the master sound: AAC copied into the MP4, Opus in the WebM, in step with the picture', async () => {
    const master = await toneMaster('tone-aac.mp4', ['-c:a', 'aac', '-b:a', '128k']);
    expect(await probe(master)).toMatchObject({ hasAudio: true, audioCodec: 'aac' });
    const source = await mediaStreams(master);
    expect(Math.abs(source.audio!.duration - 2)).toBeLessThanOrEqual(FRAME);
    const dir = await workDir();
    const result = await runPipeline({ kind: 'video', master, workDir: dir, signal: new AbortController().signal });
    expect(result.duration).toBeCloseTo(2, 1);
    const [mp4, webm] = result.formats;

    const m = await mediaStreams(mp4!.path);
    expect(m.audioStreams).toBe(1);
    expect(m.video?.codec).toBe('h264');
    expect(m.audio?.codec).toBe('aac');
    // Copied, not re-encoded: the same samples.
    expect(m.audio!.duration).toBeCloseTo(source.audio!.duration, 6);
    expect(Math.abs(m.audio!.duration - m.video!.duration)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(m.audio!.start - m.video!.start)).toBeLessThanOrEqual(FRAME);

    const w = await mediaStreams(webm!.path);
    expect(w.audioStreams).toBe(1);
    expect(w.video?.codec).toBe('vp9');
    expect(w.audio?.codec).toBe('opus');
    expect(Math.abs(w.audio!.duration - w.video!.duration)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(w.audio!.duration - source.audio!.duration)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(w.audio!.start - w.video!.start)).toBeLessThanOrEqual(FRAME);
    expect(await probe(webm!.path)).toMatchObject({ hasAudio: true, audioCodec: 'opus' });
  });

  it('encodes a master sound that is not AAC to AAC for the MP4, still remuxing the picture', async () => {
    const master = await toneMaster('tone-mp3.mp4', ['-c:a', 'libmp3lame', '-b:a', '96k']);
    expect(await probe(master)).toMatchObject({ hasAudio: true, audioCodec: 'mp3' });
    const dir = await workDir();
    const result = await runPipeline({ kind: 'video', master, workDir: dir, signal: new AbortController().signal });
    const m = await mediaStreams(result.formats[0]!.path);
    expect(m.video?.codec).toBe('h264');
    expect(m.audio?.codec).toBe('aac');
    expect(Math.abs(m.audio!.duration - m.video!.duration)).toBeLessThanOrEqual(FRAME);
    const w = await mediaStreams(result.formats[1]!.path);
    expect(w.audio?.codec).toBe('opus');
    expect(Math.abs(w.audio!.duration - w.video!.duration)).toBeLessThanOrEqual(FRAME);
  });

  it('encodes AAC above 320 kb/s anew (at 128 kb/s) instead of copying it, so stored sizes stay bounded', async () => {
    const master = join(root, 'tone-hifi.mp4');
    await runFfmpeg([
      ...['-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=24:duration=1'],
      ...['-f', 'lavfi', '-i', 'anoisesrc=d=1:c=white:a=0.5:r=96000'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
      ...['-c:a', 'aac', '-ac', '2', '-b:a', '512k', '-f', 'mp4', '-y', master],
    ]);
    expect((await probe(master)).audioBitRate).toBeGreaterThan(320_000);
    const dir = await workDir();
    const result = await runPipeline({ kind: 'video', master, workDir: dir, signal: new AbortController().signal });
    const mp4 = await probe(result.formats[0]!.path);
    expect(mp4).toMatchObject({ audioCodec: 'aac', videoCodec: 'h264' });
    expect(mp4.audioBitRate).toBeLessThanOrEqual(160_000);
  });

  it('cuts sound that runs on past the last frame, so the clip and its record are as long as the picture', async () => {
    const master = await toneMaster('tone-long.mp4', ['-c:a', 'aac'], 2.5);
    expect((await probe(master)).durationSeconds).toBeGreaterThan(2.4);
    const dir = await workDir();
    const result = await runPipeline({ kind: 'video', master, workDir: dir, signal: new AbortController().signal });
    expect(Math.abs(result.duration - 2)).toBeLessThanOrEqual(FRAME);
    for (const file of result.formats) {
      const s = await mediaStreams(file.path);
      expect(Math.abs(s.video!.duration - 2)).toBeLessThanOrEqual(FRAME);
      expect(Math.abs(s.audio!.duration - s.video!.duration)).toBeLessThanOrEqual(FRAME);
      expect(Math.abs((await probe(file.path)).durationSeconds - 2)).toBeLessThanOrEqual(FRAME);
    }
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
