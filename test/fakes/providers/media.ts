import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';

/** The outputs every provider fake serves: real files, made once per test process with ffmpeg. */
export interface FakeMedia {
  /** A 2-second 640x360 H.264 MP4 with an AAC audio track. */
  video: Buffer;
  /** A 640x360 PNG. */
  png: Buffer;
}

let made: Promise<FakeMedia> | undefined;

export function fakeMedia(): Promise<FakeMedia> {
  made ??= makeMedia();
  return made;
}

async function makeMedia(): Promise<FakeMedia> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-fake-media-'));
  try {
    const video = join(dir, 'clip.mp4');
    const png = join(dir, 'still.png');
    await runFfmpeg([
      '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=24:duration=2',
      '-f', 'lavfi', '-i', 'sine=frequency=440:duration=2',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-shortest', '-movflags', '+faststart', '-y', video,
    ]); // prettier-ignore
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=1', '-frames:v', '1', '-y', png]);
    return { video: await readFile(video), png: await readFile(png) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Answers a GET or HEAD for a file the way a CDN does: `Accept-Ranges`, and one `Range: bytes=a-b`
 * answered 206 (416 when it cannot be satisfied), so the service's resumed downloads are exercised.
 */
export function sendMedia(req: IncomingMessage, res: ServerResponse, body: Buffer, mime: string): void {
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = body.length - 1;
  if (range && (range[1] !== '' || range[2] !== '')) {
    if (range[1] === '') {
      start = Math.max(0, body.length - Number(range[2]));
    } else {
      start = Number(range[1]);
      if (range[2] !== '') end = Math.min(end, Number(range[2]));
    }
    if (start > end) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
  }
  const partial = start !== 0 || end !== body.length - 1;
  res.writeHead(partial ? 206 : 200, {
    'content-type': mime,
    'content-length': String(end - start + 1),
    'accept-ranges': 'bytes',
    ...(partial ? { 'content-range': `bytes ${start}-${end}/${body.length}` } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
}
