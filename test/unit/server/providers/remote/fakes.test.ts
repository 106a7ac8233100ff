import { describe, expect, it } from 'vitest';
import { ffprobePath, probe, runProcess } from '../../../../../shared/node/ffmpeg.ts';
import { startFalFake } from '../../../../fakes/providers/fal.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';

describe('provider fakes: their media', () => {
  it('are a 2 s 640x360 H.264 MP4 with an AAC track, and a 640x360 PNG', async () => {
    const media = await fakeMedia();
    const video = await probe(media.video.path);
    expect(video.videoCodec).toBe('h264');
    expect([video.width, video.height]).toEqual([640, 360]);
    expect(video.durationSeconds).toBeCloseTo(2, 1);
    const image = await probe(media.image.path);
    expect([image.videoCodec, image.width, image.height]).toEqual(['png', 640, 360]);
    const { stdout } = await runProcess(
      ffprobePath(),
      [
        ...['-v', 'error', '-select_streams', 'a', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0'],
        media.video.path,
      ],
      { keepStdout: true },
    );
    expect(stdout.toString('utf8').trim()).toBe('aac');
  });

  it('are served with Range support for resumed downloads', async () => {
    const media = await fakeMedia();
    const fake = await startFalFake();
    try {
      const url = `${fake.baseUrl}/fake-outputs/output.mp4`;
      const part = await fetch(url, { headers: { range: 'bytes=100-' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-${media.video.bytes - 1}/${media.video.bytes}`);
      expect((await part.arrayBuffer()).byteLength).toBe(media.video.bytes - 100);
      const past = await fetch(url, { headers: { range: `bytes=${media.video.bytes}-` } });
      expect(past.status).toBe(416);
      await past.arrayBuffer();
    } finally {
      await fake.close();
    }
  });
});
