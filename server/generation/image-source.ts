import { join } from 'node:path';
import { probe, runFfmpeg } from '../../shared/node/ffmpeg.ts';
import { ApiError } from '../errors.ts';
import { fetchImage } from '../net/fetch-image.ts';
import { isLoopbackHost, isPublicAddress } from '../net/public-address.ts';
import { getMedia, storedFiles } from '../storage/media-repo.ts';
import type { MediaRow } from '../storage/media-rows.ts';
import { isMediaId, isUploadId, mediaKey } from '../storage/layout.ts';
import { BlobNotFoundError } from '../storage/blobs/index.ts';
import { getUpload } from '../storage/uploads.ts';
import { localFile } from './local-copy.ts';
import type { GenerationServices } from './services.ts';

/**
 * Turns a request's `image_url` into a local, checked image file for the provider. The service's
 * own URLs (a file, an item, an upload) are resolved by id, for a viewer who may see the item;
 * anything else is fetched from a public address, at most 20 MB, and must sniff as an image.
 * Either way the picture must decode with ffmpeg.
 */
export async function resolveImageUrl(
  ctx: GenerationServices,
  viewer: string,
  imageUrl: string,
  workDir: string,
  signal: AbortSignal,
  /** The request's field (an image parameter such as `end_image_url` is resolved the same way): errors name it. */
  field = 'image_url',
): Promise<string> {
  let url: URL;
  try {
    url = new URL(imageUrl);
  } catch {
    throw invalid(`${field} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`${field} must be an http(s) URL`);

  // Each field its own files in the work directory: a start and an end frame side by side.
  const own = isOurOrigin(ctx, url) ? await ownFile(ctx, viewer, url, field) : null;
  const source = own
    ? await storedImage(ctx, own, workDir, signal, `${field} points at a file of this service that is gone`, field)
    : await fetchImage(url, join(workDir, `downloaded-${field}`), {
        signal,
        lookup: ctx.imageFetch.lookup,
        isAllowed: ctx.imageFetch.allowPrivate ? () => true : isPublicAddress,
      });
  return decodeFirstFrame(source, workDir, signal, `${field} does not decode as an image`, outputName(field));
}

/** The decoded picture's file: the start frame keeps its old name. */
function outputName(field: string): string {
  return field === 'image_url' ? 'start-image.png' : `${field.replace(/[^a-z0-9_]/gi, '')}.png`;
}

/**
 * POST /videos/variations: the source video's first frame as the start image, through the same
 * decode as an `image_url`. The caller has checked that the viewer owns the item.
 */
export async function firstFrameOf(
  ctx: GenerationServices,
  row: MediaRow,
  workDir: string,
  signal: AbortSignal,
): Promise<string> {
  const file = storedFiles(row)[0];
  if (!file) throw invalid(`media ${row.id} has no file to take a frame from`);
  const source = await storedImage(
    ctx,
    mediaKey(row.id, file.name),
    workDir,
    signal,
    `media ${row.id} has no stored file to take a frame from`,
  );
  return decodeFirstFrame(source, workDir, signal, `media ${row.id}'s first frame does not decode`);
}

/** One of our stored files as a local path for ffmpeg (read in place on disk, copied from a bucket). */
async function storedImage(
  ctx: GenerationServices,
  key: string,
  workDir: string,
  signal: AbortSignal,
  missing: string,
  field = 'image_url',
): Promise<string> {
  try {
    return await localFile(
      ctx.blobs,
      key,
      workDir,
      field === 'image_url' ? 'stored-source' : `stored-${field}`,
      signal,
    );
  } catch (error) {
    if (error instanceof BlobNotFoundError) throw invalid(missing);
    throw error;
  }
}

async function decodeFirstFrame(
  source: string,
  workDir: string,
  signal: AbortSignal,
  failure: string,
  name = 'start-image.png',
) {
  // Decode the first frame into a fresh PNG: proves it is a picture, and hands the provider a
  // clean file whatever else the original carried (trailing bytes, odd chunks, animation).
  const path = join(workDir, name);
  try {
    await runFfmpeg(['-i', source, '-frames:v', '1', '-an', '-y', path], { signal, timeoutMs: 60_000 });
    const facts = await probe(path, { signal, timeoutMs: 30_000 });
    if (!facts.hasVideo || facts.width === 0 || facts.height === 0) throw new Error('no picture');
  } catch (error) {
    if (signal.aborted) throw error;
    throw invalid(failure);
  }
  return path;
}

/** The service's own origin; a loopback origin also under its other loopback names. */
function isOurOrigin(ctx: GenerationServices, url: URL): boolean {
  const ours = new URL(ctx.origin());
  if (url.origin === ours.origin) return true;
  return (
    url.protocol === ours.protocol &&
    url.port === ours.port &&
    isLoopbackHost(url.hostname) &&
    isLoopbackHost(ours.hostname)
  );
}

/**
 * One of our URLs, resolved by id rather than fetched: a file URL (`/v1/files/:id/:name`), an item
 * or its download (`/v1/media/:id[/content]`), or an upload URL (`/v1/uploads/:id`, once
 * completed). The viewer must be allowed to see the item (their own, or public): the id, not a
 * signature, decides, so an expired signed URL of one's own image still works. Answers the
 * file's storage key.
 */
async function ownFile(ctx: GenerationServices, viewer: string, url: URL, field: string): Promise<string> {
  const path = url.pathname;
  let row: MediaRow | undefined;
  let name: string | undefined;
  const file = /^\/v1\/files\/([^/]+)\/([^/]+)$/.exec(path);
  const item = /^\/v1\/media\/([^/]+?)(?:\/content)?$/.exec(path);
  const upload = /^\/v1\/uploads\/([^/]+)$/.exec(path);
  if (file) {
    row = isMediaId(file[1] ?? '') ? await getMedia(ctx.db, file[1] ?? '') : undefined;
    name = file[2];
  } else if (upload || (item && isUploadId(item[1] ?? ''))) {
    const id = (upload ?? item)?.[1] ?? '';
    const up = isUploadId(id) ? await getUpload(ctx.db, id) : undefined;
    if (up?.user_id === viewer && up.media_id === null)
      throw invalid(`${field} is an upload that is not completed; POST /v1/media/${id} first`);
    row = up?.user_id === viewer && up.media_id !== null ? await getMedia(ctx.db, up.media_id) : undefined;
  } else if (item) {
    row = isMediaId(item[1] ?? '') ? await getMedia(ctx.db, item[1] ?? '') : undefined;
  } else {
    throw invalid(`${field} points at this service but not at a media item or file`);
  }
  if (!row || (row.user_id !== viewer && row.public !== 1))
    throw invalid(`${field} points at a media item of this service that does not exist or is not yours`);
  const files = storedFiles(row);
  const stored = name === undefined ? files[0] : files.find((f) => f.name === name);
  if (!stored) throw invalid(`${field} points at a file this media item does not have`);
  if (!stored.mime.startsWith('image/')) throw invalid(`${field} is not an image (it is ${stored.mime})`);
  return mediaKey(row.id, stored.name);
}

function invalid(message: string): ApiError {
  return new ApiError('invalid_request_error', message);
}
