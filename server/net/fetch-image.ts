import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { Agent, request } from 'undici';
import { CONTENT_LIMITS } from '../../shared/api/index.ts';
import { SNIFF_BYTES, sniffMime } from '../../shared/node/sniff.ts';
import { ApiError } from '../errors.ts';
import type { HostLookup } from './host-lookup.ts';

const FETCH_TIMEOUT_MS = 15_000;
/** Redirects followed by hand, each to an address checked like the first. */
export const MAX_REDIRECTS = 5;

/** How `image_url`s that are not ours may be fetched. */
export interface ImageFetchPolicy {
  /** `--allow-private-image-urls`: loopback and private addresses too (the embedded engine, tests). */
  allowPrivate: boolean;
  lookup: HostLookup;
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
