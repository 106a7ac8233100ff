import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';

export interface SampleMedia {
  /** A 1-second 320x180 H.264 MP4 with an AAC audio track. */
  mp4: Buffer;
  /** A 64x64 PNG. */
  png: Buffer;
}

let made: Promise<SampleMedia> | null = null;

/** Real files made with ffmpeg, once per test process, for fake providers to return. */
export function sampleMedia(): Promise<SampleMedia> {
  made ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-fake-media-'));
    const mp4 = join(dir, 'clip.mp4');
    const png = join(dir, 'still.png');
    await runFfmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=320x180:rate=24:duration=1',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      '-movflags',
      '+faststart',
      '-y',
      mp4,
    ]);
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x64', '-frames:v', '1', '-y', png]);
    return { mp4: await readFile(mp4), png: await readFile(png) };
  })();
  return made;
}
