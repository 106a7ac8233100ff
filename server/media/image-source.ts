import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { Agent, request } from 'undici';
import { CONTENT_LIMITS } from '../../shared/api/index.ts';
import { SNIFF_BYTES, sniffMime } from '../../shared/node/sniff.ts';
import { probe, runFfmpeg } from '../../shared/node/ffmpeg.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { getMedia, storedFiles } from '../storage/media-repo.ts';
import type { MediaRow } from '../storage/media-repo.ts';
import { isMediaId, isUploadId, mediaKey } from '../storage/layout.ts';
import { BlobNotFoundError } from '../storage/blobs/index.ts';
import { localFile } from './local-copy.ts';
import { getUpload } from '../uploads/tickets.ts';
import { isLoopbackHost, isPublicAddress } from './public-address.ts';

const FETCH_TIMEOUT_MS = 15_000;
/** Redirects followed by hand, each to an address checked like the first. */
export const MAX_REDIRECTS = 5;

/** Resolves a host name to its addresses (dns.lookup by default; tests inject their own). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** How `image_url`s that are not ours may be fetched. */
export interface ImageFetchPolicy {
  /** `--allow-private-image-urls`: loopback and private addresses too (the embedded engine, tests). */
  allowPrivate: boolean;
  lookup: HostLookup;
}

export const defaultHostLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Turns a request's `image_url` into a local, checked image file for the provider. The service's
 * own URLs (a file, an item, an upload) are resolved by id, for a viewer who may see the item;
 * anything else is fetched from a public address, at most 20 MB, and must sniff as an image.
 * Either way the picture must decode with ffmpeg.
 */
export async function resolveImageUrl(
  ctx: ServiceContext,
  viewer: string,
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

  const own = isOurOrigin(ctx, url) ? await ownFile(ctx, viewer, url) : null;
  const source = own
    ? await storedImage(ctx, own, workDir, signal, 'image_url points at a file of this service that is gone')
    : await fetchImage(url, join(workDir, 'downloaded-image'), {
        signal,
        lookup: ctx.imageFetch.lookup,
        isAllowed: ctx.imageFetch.allowPrivate ? () => true : isPublicAddress,
      });
  return decodeFirstFrame(source, workDir, signal, 'image_url does not decode as an image');
}

/**
 * POST /videos/variations: the source video's first frame as the start image, through the same
 * decode as an `image_url`. The caller has checked that the viewer owns the item.
 */
export async function firstFrameOf(
  ctx: ServiceContext,
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
  ctx: ServiceContext,
  key: string,
  workDir: string,
  signal: AbortSignal,
  missing: string,
): Promise<string> {
  try {
    return await localFile(ctx.blobs, key, workDir, 'stored-source', signal);
  } catch (error) {
    if (error instanceof BlobNotFoundError) throw invalid(missing);
    throw error;
  }
}

async function decodeFirstFrame(source: string, workDir: string, signal: AbortSignal, failure: string) {
  // Decode the first frame into a fresh PNG: proves it is a picture, and hands the provider a
  // clean file whatever else the original carried (trailing bytes, odd chunks, animation).
  const path = join(workDir, 'start-image.png');
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
function isOurOrigin(ctx: ServiceContext, url: URL): boolean {
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
async function ownFile(ctx: ServiceContext, viewer: string, url: URL): Promise<string> {
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
    const up = isUploadId(id) ? await getUpload(ctx, id) : undefined;
    if (up?.user_id === viewer && up.media_id === null)
      throw invalid(`image_url is an upload that is not completed; POST /v1/media/${id} first`);
    row = up?.user_id === viewer && up.media_id !== null ? await getMedia(ctx.db, up.media_id) : undefined;
  } else if (item) {
    row = isMediaId(item[1] ?? '') ? await getMedia(ctx.db, item[1] ?? '') : undefined;
  } else {
    throw invalid('image_url points at this service but not at a media item or file');
  }
  if (!row || (row.user_id !== viewer && row.public !== 1))
    throw invalid('image_url points at a media item of this service that does not exist or is not yours');
  const files = storedFiles(row);
  const stored = name === undefined ? files[0] : files.find((f) => f.name === name);
  if (!stored) throw invalid('image_url points at a file this media item does not have');
  if (!stored.mime.startsWith('image/')) throw invalid(`image_url is not an image (it is ${stored.mime})`);
  return mediaKey(row.id, stored.name);
}

export interface FetchImageOptions {
  signal: AbortSignal;
  lookup: HostLookup;
  /** Whether an address the host resolves to may be connected to. */
  isAllowed: (address: string) => boolean;
}

/**
 * Downloads an image from the web to `path`. The address check happens where the connection is
 * made (the agent's DNS lookup), so the address checked is the address connected to and DNS
 * rebinding cannot slip a private address in between; IP literals are checked before. Redirects
 * are followed by hand, at most MAX_REDIRECTS, each hop checked the same way.
 */
export async function fetchImage(start: URL, path: string, opts: FetchImageOptions): Promise<string> {
  const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]);
  const refused = new Map<string, string>();
  const agent = new Agent({
    connect: {
      lookup: ((hostname, options, callback) => {
        const fail = (error: Error) => callback(error, '', 0);
        opts.lookup(hostname).then((found) => {
          const bad = found.find((a) => !opts.isAllowed(a.address));
          if (found.length === 0) return fail(new Error(`${hostname} has no address`));
          if (bad) {
            refused.set(hostname, bad.address);
            return fail(new Error(`${hostname} resolves to ${bad.address}`));
          }
          if (options.all === true) callback(null, found);
          else callback(null, found[0]?.address ?? '', found[0]?.family ?? 4);
        }, fail);
      }) satisfies LookupFunction,
    },
  });
  try {
    let url = start;
    for (let hop = 0; ; hop++) {
      checkUrl(url, hop, opts.isAllowed);
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, { method: 'GET', signal, dispatcher: agent });
      } catch (error) {
        if (opts.signal.aborted) throw error;
        const address = refused.get(url.hostname);
        if (address !== undefined) throw notPublic(url, hop, `it resolves to ${address}`);
        throw invalid(`image_url is not reachable (${error instanceof Error ? error.message : String(error)})`);
      }
      const location = response.headers['location'];
      if ([301, 302, 303, 307, 308].includes(response.statusCode) && typeof location === 'string') {
        await response.body.dump().catch(() => undefined);
        if (hop >= MAX_REDIRECTS) throw invalid(`image_url redirects more than ${MAX_REDIRECTS} times`);
        try {
          url = new URL(location, url);
        } catch {
          throw invalid('image_url redirects to an invalid URL');
        }
        continue;
      }
      return await saveImage(response, path, signal, opts.signal);
    }
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/** The checks made before a connection: scheme, and an address written in the URL itself. */
function checkUrl(url: URL, hop: number, isAllowed: (address: string) => boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(hop === 0 ? 'image_url must be an http(s) URL' : 'image_url redirects to a URL that is not http(s)');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && !isAllowed(host)) throw notPublic(url, hop, `${host} is not a public address`);
}

function notPublic(url: URL, hop: number, why: string): ApiError {
  const what = hop === 0 ? 'image_url' : `image_url redirects to ${url.host}, which`;
  return invalid(
    `${what} must be a public address (${why}); loopback, private and link-local addresses are refused ` +
      '(an operator can allow them with --allow-private-image-urls)',
  );
}

async function saveImage(
  response: Awaited<ReturnType<typeof request>>,
  path: string,
  signal: AbortSignal,
  outer: AbortSignal,
): Promise<string> {
  if (response.statusCode < 200 || response.statusCode >= 300) {
    await response.body.dump().catch(() => undefined);
    throw invalid(`image_url is not reachable (HTTP ${response.statusCode})`);
  }
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (declared > CONTENT_LIMITS.uploadImageBytes) {
    response.body.destroy();
    throw new ApiError('payload_too_large', `image_url is larger than ${CONTENT_LIMITS.uploadImageBytes} bytes`);
  }
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
    await pipeline(response.body, guard, createWriteStream(path), { signal });
  } catch (error) {
    await rm(path, { force: true });
    if (error instanceof ApiError || outer.aborted) throw error;
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
