import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { request } from 'undici';
import { CONTENT_LIMITS } from '../../shared/api/index.ts';
import { SNIFF_BYTES, sniffMime } from '../../shared/node/sniff.ts';
import { probe, runFfmpeg } from '../../shared/node/ffmpeg.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { storedFiles } from '../storage/media-repo.ts';
import { checkFileUrl } from './urls.ts';
import { isMediaId, isStoredFileName } from '../storage/layout.ts';

const FETCH_TIMEOUT_MS = 15_000;

/**
 * Turns a request's `image_url` into a local, checked image file for the provider. Our own file
 * URLs (a completed upload, a generated image) are read from disk; anything else is fetched, at
 * most 20 MB, and must sniff as an image and decode with ffprobe.
 */
export async function resolveImageUrl(
  ctx: ServiceContext,
  imageUrl: string,
  workDir: string,
  signal: AbortSignal,
): Promise<string> {
  let url: URL;
  try {
    url = new URL(imageUrl);
  } catch {
    throw invalid('image_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('image_url must be an http(s) URL');

  const local = ownFile(ctx, url);
  const source = local ?? (await download(url, workDir, signal));
  // Decode the first frame into a fresh PNG: proves it is a picture, and hands the provider a
  // clean file whatever else the original carried (trailing bytes, odd chunks, animation).
  const path = join(workDir, 'start-image.png');
  try {
    await runFfmpeg(['-i', source, '-frames:v', '1', '-an', '-y', path], { signal, timeoutMs: 60_000 });
    const facts = await probe(path, { signal, timeoutMs: 30_000 });
    if (!facts.hasVideo || facts.width === 0 || facts.height === 0) throw new Error('no picture');
  } catch (error) {
    if (signal.aborted) throw error;
    throw invalid('image_url does not decode as an image');
  }
  return path;
}

/** The path of one of our stored images when `url` is one of our signed file URLs. */
function ownFile(ctx: ServiceContext, url: URL): string | null {
  const match = /^\/v1\/files\/([^/]+)\/([^/]+)$/.exec(url.pathname);
  if (!match || url.origin !== new URL(ctx.origin()).origin) return null;
  const [, id = '', file = ''] = match;
  const check = isMediaId(id) && isStoredFileName(file) ? checkFileUrl(ctx, id, file, url.searchParams) : null;
  if (check?.ok === false && check.expired)
    throw invalid(`image_url has expired; GET /v1/media/${id} returns the item with fresh URLs`);
  if (!check?.ok) throw invalid('image_url points at this service but is not a valid file URL');
  const { row } = check;
  const stored = storedFiles(row).find((f) => f.name === file);
  if (!stored) throw invalid('image_url points at a media item that no longer exists');
  if (!stored.mime.startsWith('image/')) throw invalid(`image_url is not an image (it is ${stored.mime})`);
  return ctx.layout.mediaPath(id, file);
}

async function download(url: URL, workDir: string, signal: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method: 'GET',
      signal: AbortSignal.any([signal, timeout]),
      maxRedirections: 3,
    } as Parameters<typeof request>[1]);
  } catch (error) {
    if (signal.aborted) throw error;
    throw invalid(`image_url is not reachable (${error instanceof Error ? error.message : String(error)})`);
  }
  if (response.statusCode < 200 || response.statusCode >= 300) {
    await response.body.dump().catch(() => undefined);
    throw invalid(`image_url is not reachable (HTTP ${response.statusCode})`);
  }
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (declared > CONTENT_LIMITS.uploadImageBytes) {
    response.body.destroy();
    throw new ApiError('payload_too_large', `image_url is larger than ${CONTENT_LIMITS.uploadImageBytes} bytes`);
  }
  const path = join(workDir, 'downloaded-image');
  let received = 0;
  let head = Buffer.alloc(0);
  const guard = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > CONTENT_LIMITS.uploadImageBytes) {
        done(new ApiError('payload_too_large', `image_url is larger than ${CONTENT_LIMITS.uploadImageBytes} bytes`));
        return;
      }
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk]).subarray(0, SNIFF_BYTES);
      done(null, chunk);
    },
  });
  try {
    await pipeline(response.body, guard, createWriteStream(path), { signal: AbortSignal.any([signal, timeout]) });
  } catch (error) {
    await rm(path, { force: true });
    if (error instanceof ApiError || signal.aborted) throw error;
    throw invalid(`image_url could not be read (${error instanceof Error ? error.message : String(error)})`);
  }
  const sniffed = sniffMime(head);
  if (sniffed?.kind !== 'image') {
    await rm(path, { force: true });
    throw invalid('image_url is not an image (its content is not PNG, JPEG, WebP or GIF)');
  }
  return path;
}

function invalid(message: string): ApiError {
  return new ApiError('invalid_request_error', message);
}
