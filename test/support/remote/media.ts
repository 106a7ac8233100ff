import { readFile } from 'node:fs/promises';
import { fakeMedia } from '../../fakes/providers/media.ts';

export interface SampleMedia {
  /** A 2-second 640x360 H.264 MP4 with an AAC audio track. */
  mp4: Buffer;
  /** A 640x360 PNG. */
  png: Buffer;
}

/** The provider fakes' real files (made with ffmpeg once per run), as bytes for a fake to return. */
export async function sampleMedia(): Promise<SampleMedia> {
  const media = await fakeMedia();
  return { mp4: await readFile(media.video.path), png: await readFile(media.image.path) };
}
