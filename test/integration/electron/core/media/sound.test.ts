import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMediaTools } from '../../../../../electron/core/media/index.ts';
import type { MediaTools } from '../../../../../electron/core/media/index.ts';
import { resolveMediaBinaries } from '../../../../../shared/node/ffmpeg.ts';
import { mediaStreams, silences } from '../../../../support/media-streams.ts';
import type { MediaStreams } from '../../../../support/media-streams.ts';

/**
 * Sound through the app's own ffmpeg work: previews, exports, trims and shot sequences keep a
 * clip's audio track in step with its picture. Every result is decoded and measured.
 */
let dir: string;
let tools: MediaTools;
/** 1 s, 320x180 at 15 fps, with a tone: the sequence's first shot sets its size and rate. */
let tone: string;
/** 2 s, 640x360 at 24 fps, no sound. */
let silentWide: string;
/** 1.5 s, 480x480 at 30 fps, VP9 with Opus (mono, 22.05 kHz before Opus' 48 kHz). */
let opusSquare: string;
/** 3 s at 15 fps with a keyframe every second; silent for its first second, then a tone. */
let lateTone: string;
/** 3 s at 15 fps whose audio track itself starts 1 s in (its stream's start time). */
let offsetTone: string;
/** A still image. */
let still: string;
/** Sound and no picture. */
let audioOnly: string;

const FRAME = 1 / 15;

function ffmpeg(args: string[]): void {
  const r = spawnSync(resolveMediaBinaries().ffmpegPath, ['-hide_banner', '-loglevel', 'error', '-y', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`fixture ffmpeg failed: ${r.stderr}`);
}

const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'clipdesk-sound-'));
  tools = createMediaTools({ timeoutMs: 60_000 });
  tone = join(dir, 'tone.mp4');
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=15:duration=1'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'],
    ...x264,
    ...['-c:a', 'aac', tone],
  ]);
  silentWide = join(dir, 'silent-wide.mp4');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=24:duration=2', ...x264, silentWide]);
  opusSquare = join(dir, 'opus-square.webm');
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc2=size=480x480:rate=30:duration=1.5'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=880:sample_rate=22050:duration=1.5'],
    ...['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8'],
    ...['-c:a', 'libopus', '-ac', '1', opusSquare],
  ]);
  lateTone = join(dir, 'late-tone.mp4');
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=15:duration=3'],
    ...['-f', 'lavfi', '-i', 'aevalsrc=if(gte(t\\,1)\\,sin(2*PI*440*t)\\,0):s=44100:d=3'],
    ...x264,
    ...['-g', '15', '-c:a', 'aac', lateTone],
  ]);
  offsetTone = join(dir, 'offset-tone.mp4');
  ffmpeg([
    ...['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=15:duration=3'],
    ...['-itsoffset', '1', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'],
    ...x264,
    ...['-c:a', 'aac', offsetTone],
  ]);
  still = join(dir, 'still.png');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=1:duration=1', '-frames:v', '1', still]);
  audioOnly = join(dir, 'tone.m4a');
  ffmpeg(['-f', 'lavfi', '-i', 'sine=duration=1', '-c:a', 'aac', audioOnly]);
});

afterAll(async () => {
  await tools.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** One audio track, of this codec, as long as the picture and starting with it. */
function expectInStep(s: MediaStreams, codec: string, tolerance = FRAME): void {
  expect(s.audioStreams).toBe(1);
  expect(s.audio?.codec).toBe(codec);
  expect(Math.abs(s.audio!.duration - s.video!.duration)).toBeLessThanOrEqual(tolerance);
  expect(Math.abs(s.audio!.start - s.video!.start)).toBeLessThanOrEqual(tolerance);
}

describe('previews and exports keep the sound', () => {
  it('preview proxy and MP4 export carry AAC, WebM export carries Opus', async () => {
    const preview = join(dir, 'preview.mp4');
    await tools.previewProxy(tone, preview, { maxHeight: 120 });
    expectInStep(await mediaStreams(preview), 'aac');
    const mp4 = join(dir, 'export.mp4');
    await tools.exportMp4(opusSquare, mp4, { preset: 'ultrafast' });
    expectInStep(await mediaStreams(mp4), 'aac');
    const webm = join(dir, 'export.webm');
    await tools.exportWebm(tone, webm, { speed: 8 });
    expectInStep(await mediaStreams(webm), 'opus');
  });

  it('a silent clip exports silent', async () => {
    const mp4 = join(dir, 'silent-export.mp4');
    await tools.exportMp4(silentWide, mp4, { preset: 'ultrafast' });
    expect((await mediaStreams(mp4)).audioStreams).toBe(0);
  });
});

describe('trim keeps sound and picture in step', () => {
  it('accurate: both cut at the in point, so the tone that began at 1 s begins at 0.5 s', async () => {
    const out = join(dir, 'trim-accurate.mp4');
    await tools.trim(lateTone, out, { start: 0.5, end: 2.2 });
    const s = await mediaStreams(out);
    expectInStep(s, 'aac');
    expect(s.video!.duration).toBeCloseTo(1.7, 1);
    const [quiet] = await silences(out);
    expect(quiet![0]).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(quiet![1] - 0.5)).toBeLessThanOrEqual(FRAME);
  });

  it('fast: both start at the keyframe before the in point (0 s), so the tone stays at 1 s', async () => {
    const out = join(dir, 'trim-fast.mp4');
    await tools.trim(lateTone, out, { start: 0.5, end: 2.2, mode: 'fast' });
    const s = await mediaStreams(out);
    expectInStep(s, 'aac');
    const [quiet] = await silences(out);
    expect(Math.abs(quiet![1] - 1)).toBeLessThanOrEqual(FRAME);
  });
});

describe('shot sequences', () => {
  it('joins shots of different sizes and rates, with and without sound, keeping each sound under its shot', async () => {
    const out = join(dir, 'sequence-mixed.mp4');
    await tools.sequence([tone, silentWide, opusSquare], out, { preset: 'ultrafast' });
    const info = await tools.probe(out);
    expect(info.video).toMatchObject({ codec: 'h264', width: 320, height: 180 });
    expect(info.video?.fps).toBeCloseTo(15, 3);
    expect(info.audio).toMatchObject({ codec: 'aac', channels: 2, sampleRate: 48000 });
    const s = await mediaStreams(out);
    // 1 + 2 + 1.5 s; each shot's audio codec pads its last frame, so allow a little more than a frame.
    expect(s.video!.duration).toBeCloseTo(4.5, 1);
    expectInStep(s, 'aac', 0.1);
    // The silent shot's silence sits exactly under it: from the end of the first shot (1 s) to 3 s.
    const quiet = (await silences(out)).filter(([a, b]) => b - a > 1);
    expect(quiet).toHaveLength(1);
    expect(Math.abs(quiet[0]![0] - 1)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(quiet[0]![1] - 3)).toBeLessThanOrEqual(FRAME);
  });

  it('keeps a sound track that starts after its picture where it starts, and takes the size asked for', async () => {
    const out = join(dir, 'sequence-late.mp4');
    expect((await mediaStreams(offsetTone)).audio!.start).toBeCloseTo(1, 1);
    await tools.sequence([silentWide, offsetTone], out, { preset: 'ultrafast', width: 426, height: 240, fps: 24 });
    const info = await tools.probe(out);
    expect(info.video).toMatchObject({ width: 426, height: 240 });
    expect(info.video?.fps).toBeCloseTo(24, 3);
    const s = await mediaStreams(out);
    expect(s.video!.duration).toBeCloseTo(5, 1);
    expectInStep(s, 'aac', 0.1);
    // Silence through the first shot (2 s) and the first second of the second: the tone starts at 3 s.
    const [quiet] = await silences(out);
    expect(quiet![0]).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(quiet![1] - 3)).toBeLessThanOrEqual(FRAME);
  });

  it('a sequence of silent shots has no audio track', async () => {
    const out = join(dir, 'sequence-silent.mp4');
    await tools.sequence([silentWide, silentWide], out, { preset: 'ultrafast' });
    const s = await mediaStreams(out);
    expect(s.audioStreams).toBe(0);
    expect(s.video!.duration).toBeCloseTo(4, 1);
  });

  it('refuses what it cannot join, naming it', async () => {
    await expect(tools.sequence([], join(dir, 'none.mp4'))).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(tools.sequence([tone, still], join(dir, 'still.mp4'))).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/clip 2 is a still image/),
    });
    await expect(tools.sequence([tone, audioOnly], join(dir, 'audio.mp4'))).rejects.toMatchObject({
      code: 'input_no_video',
      message: expect.stringContaining('tone.m4a'),
    });
    await expect(tools.sequence([silentWide, tone], tone)).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(tools.running()).toEqual([]);
  });
});
