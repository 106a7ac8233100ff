import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../errors.ts';
import { sendJson } from './respond.ts';

export interface ServeOptions {
  mime: string;
  cacheControl: string;
  etag: string;
  disposition?: string;
  headers?: Record<string, string>;
  /**
   * Called once every byte of a whole-file 200 has been handed to the response, before it
   * finishes. Work that must be visible to the client's next request (marking the item downloaded)
   * goes here: a client that has read the whole body may send its next request before the
   * response's own completion is observed here.
   */
  onWholeBody?: () => void;
}

/**
 * Read size when serving a file. With Node's 64 KiB default, sending 100 MB took ~1,500 rounds of
 * thread-pool read, socket write and stream bookkeeping: 130-150 ms of CPU here, a whole core, and
 * the bottleneck of every download (curl -o of a 100 MB item: ~155 ms). 1 MiB reads cut that to
 * ~50 ms (curl -o: ~117 ms); larger reads gained nothing more. Backpressure still holds each
 * response to about one read in memory.
 */
const FILE_READ_BYTES = 1 << 20;

type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/** Parses a single `bytes=` range; several ranges or other units are ignored (a 200 is allowed). */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null;
  const [, from = '', to = ''] = m;
  if (from === '' && to === '') return null;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * Streams a stored file with Range (206/416), its Content-Type and cache headers; HEAD sends headers only.
 */
export async function serveFile(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  o: ServeOptions,
): Promise<void> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new ApiError('not_found_error', 'file not found');
  }
  const base: Record<string, string> = {
    'content-type': o.mime,
    'accept-ranges': 'bytes',
    'cache-control': o.cacheControl,
    etag: o.etag,
    'x-content-type-options': 'nosniff',
    ...(o.disposition ? { 'content-disposition': o.disposition } : {}),
    ...o.headers,
  };
  if (req.headers['if-none-match'] === o.etag) {
    res.writeHead(304, base);
    res.end();
    return;
  }
  // If-Range with another validator means the client's copy is stale: send the whole file.
  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === o.etag ? parseRange(req.headers.range, size) : null;
  if (range === 'unsatisfiable') {
    sendJson(
      res,
      416,
      { success: false, message: `range not satisfiable (the file has ${size} bytes)`, code: 'invalid_request_error' },
      {
        ...o.headers,
        'content-range': `bytes */${size}`,
      },
    );
    return;
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const headers: Record<string, string> = { ...base, 'content-length': String(Math.max(0, end - start + 1)) };
  if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  if (size === 0) {
    if (range === null) o.onWholeBody?.();
    res.end();
    return;
  }
  try {
    const file = createReadStream(path, { start, end, highWaterMark: FILE_READ_BYTES });
    if (range === null && o.onWholeBody) file.once('end', o.onWholeBody);
    await pipeline(file, res);
  } catch {
    // The client went away mid-download, or retention removed the file: nothing left to answer.
    res.destroy();
  }
}
