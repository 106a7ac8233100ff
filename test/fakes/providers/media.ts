import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';

/**
 * The real files the provider fakes hand out as outputs: a 2-second 640x360 H.264 MP4 with an AAC
 * audio track, and a 640x360 PNG. Made with ffmpeg once per test run (cached in the temp directory;
 * test files run in parallel processes, so each file is written aside and renamed into place).
 */
export interface FakeMedia {
  video: { path: string; mime: 'video/mp4'; bytes: number };
  image: { path: string; mime: 'image/png'; bytes: number };
}

const CACHE = join(tmpdir(), 'clipdesk-provider-fake-media-v1');
let made: Promise<FakeMedia> | undefined;

export function fakeMedia(): Promise<FakeMedia> {
  made ??= make();
  return made;
}

async function make(): Promise<FakeMedia> {
  await mkdir(CACHE, { recursive: true });
  const video = join(CACHE, 'output.mp4');
  const image = join(CACHE, 'output.png');
  await ensure(video, (out) => [
    ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=2'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=2'],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart'],
    ...['-f', 'mp4', '-y', out],
  ]);
  await ensure(image, (out) => [
    ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360', '-frames:v', '1', '-f', 'image2', '-c:v', 'png', '-y', out],
  ]);
  return {
    video: { path: video, mime: 'video/mp4', bytes: (await stat(video)).size },
    image: { path: image, mime: 'image/png', bytes: (await stat(image)).size },
  };
}

async function ensure(path: string, args: (out: string) => string[]): Promise<void> {
  if (await exists(path)) return;
  const dir = await mkdtemp(join(CACHE, 'make-'));
  try {
    const out = join(dir, 'file');
    await runFfmpeg(args(out), { timeoutMs: 60_000 });
    await rename(out, path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.size > 0,
    () => false,
  );
}

/**
 * Serves a file with `Range: bytes=N-` / `bytes=N-M` support (the service downloads with Range
 * resume), answering 206 with Content-Range, or 416 for a range past the end.
 */
export async function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: { path: string; mime: string; bytes: number },
): Promise<void> {
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  let start = 0;
  let end = file.bytes - 1;
  if (range) {
    start = Number(range[1]);
    if (range[2]) end = Math.min(end, Number(range[2]));
    if (start > end) {
      res.writeHead(416, { 'content-range': `bytes */${file.bytes}` }).end();
      return;
    }
    res.writeHead(206, {
      'content-type': file.mime,
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${file.bytes}`,
      'accept-ranges': 'bytes',
    });
  } else {
    res.writeHead(200, { 'content-type': file.mime, 'content-length': file.bytes, 'accept-ranges': 'bytes' });
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(file.path, { start, end }), res).catch(() => undefined);
}
