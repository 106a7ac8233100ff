import { execFile } from 'node:child_process';
import { createReadStream, rmSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { resolveMediaBinaries } from '../../../shared/node/ffmpeg.ts';

/**
 * The real files the provider fakes hand out as outputs, made once per test run with ffmpeg:
 * a 2-second 640x360 H.264 MP4 with an AAC audio track, and a PNG.
 */
export interface FakeMedia {
  video: { path: string; mime: 'video/mp4' };
  image: { path: string; mime: 'image/png' };
}

const run = promisify(execFile);
let made: Promise<FakeMedia> | undefined;

export function fakeMedia(): Promise<FakeMedia> {
  made ??= makeMedia();
  return made;
}

async function makeMedia(): Promise<FakeMedia> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-fake-media-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const { ffmpegPath } = resolveMediaBinaries();
  const video = join(dir, 'output.mp4');
  const image = join(dir, 'output.png');
  const quiet = ['-hide_banner', '-loglevel', 'error', '-y'];
  await run(ffmpegPath, [
    ...quiet,
    ...['-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=25:duration=2'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart'],
    video,
  ]);
  await run(ffmpegPath, [...quiet, '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=1', '-frames:v', '1', image]);
  return { video: { path: video, mime: 'video/mp4' }, image: { path: image, mime: 'image/png' } };
}

/**
 * Serves a file the way a CDN does: Content-Length, Accept-Ranges and a single `bytes=` Range
 * (the service resumes downloads with Range).
 */
export async function sendFile(req: IncomingMessage, res: ServerResponse, path: string, mime: string): Promise<void> {
  const size = (await stat(path)).size;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = size - 1;
  if (range && (range[1] || range[2])) {
    start = range[1] ? Number(range[1]) : Math.max(0, size - Number(range[2]));
    end = range[1] && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
    if (start > end || start >= size) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    res.writeHead(206, {
      'content-type': mime,
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${size}`,
      'accept-ranges': 'bytes',
    });
  } else {
    res.writeHead(200, { 'content-type': mime, 'content-length': size, 'accept-ranges': 'bytes' });
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(path, { start, end }), res).catch(() => {
    // The client went away mid-download (the service's resume tests do this on purpose).
  });
}
