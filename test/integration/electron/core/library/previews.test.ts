import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHoverPreviews } from '../../../../../electron/core/library/index.ts';
import { createMediaTools, type MediaTools } from '../../../../../electron/core/media/index.ts';
import { resolveMediaBinaries } from '../../../../../shared/node/ffmpeg.ts';

// The hover-play proxy on the real ffmpeg: made once from a saved 720p take with sound, then
// checked with ffprobe: 360 lines high, no sound, a keyframe every 12 frames, smaller than the take.
let dir: string;
let take: string;
let tools: MediaTools;

function run(bin: string, args: string[]): string {
  const r = spawnSync(bin, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${bin} failed: ${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'clipdesk-previews-'));
  take = join(dir, 'take.mp4');
  // 2 s at 24 fps, 1280x720, with sound and one keyframe for the whole clip: what a provider sends.
  run(resolveMediaBinaries().ffmpegPath, [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=24:duration=2'],
    ...['-f', 'lavfi', '-i', 'sine=duration=2'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '240', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
    take,
  ]);
  tools = createMediaTools();
});
afterAll(async () => {
  await tools.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('hover-play previews', () => {
  it('makes a small, silent, short-GOP proxy once, and knows it after a restart', async () => {
    const previews = createHoverPreviews({ dir: join(dir, 'previews'), tools: () => tools });
    expect(previews.fileOf('med_1')).toBeNull();
    const [file, again] = await Promise.all([previews.make('med_1', take), previews.make('med_1', take)]);
    expect(file).toBe(join(dir, 'previews', 'med_1.mp4'));
    expect(again).toBe(file);
    expect(previews.fileOf('med_1')).toBe(file);

    const ffprobe = resolveMediaBinaries().ffprobePath;
    const streams = JSON.parse(
      run(ffprobe, ['-v', 'error', '-show_entries', 'stream=codec_type,width,height', '-of', 'json', file!]),
    ) as { streams: { codec_type: string; width?: number; height?: number }[] };
    expect(streams.streams).toEqual([{ codec_type: 'video', width: 640, height: 360 }]);
    const keyframes = run(ffprobe, [
      ...['-v', 'error', '-select_streams', 'v:0', '-skip_frame', 'nokey'],
      ...['-show_entries', 'frame=pts_time', '-of', 'csv=p=0', file!],
    ])
      .split('\n')
      .map((line) => line.replace(/,+$/, '').trim())
      .filter((line) => line !== '');
    expect(keyframes).toEqual(['0.000000', '0.500000', '1.000000', '1.500000']); // 48 frames, a keyframe every 12
    expect(statSync(file!).size).toBeLessThan(statSync(take).size / 2);

    await previews.dispose();
    const restarted = createHoverPreviews({ dir: join(dir, 'previews'), tools: () => tools });
    expect(restarted.fileOf('med_1')).toBe(file);
    await restarted.dispose();
  });

  it('answers null for a file ffmpeg cannot read, and leaves no partial file', async () => {
    const errors: string[] = [];
    const bad = createHoverPreviews({
      dir: join(dir, 'previews-bad'),
      tools: () => tools,
      onError: (id) => errors.push(id),
    });
    expect(await bad.make('med/odd id', join(dir, 'missing.mp4'))).toBeNull();
    expect(errors).toEqual(['med/odd id']);
    expect(bad.fileOf('med/odd id')).toBeNull();
    expect(spawnSync('ls', [join(dir, 'previews-bad')], { encoding: 'utf8' }).stdout.trim()).toBe('');
    await bad.dispose();
  });
});
