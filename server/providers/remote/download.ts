import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { open, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { SNIFF_BYTES, implausibleDecode, sniffMime } from '../../../shared/node/sniff.ts';
import { probe } from '../../../shared/node/ffmpeg.ts';
import type { ProbeResult } from '../../../shared/node/ffmpeg.ts';
import type { HostLookup } from '../../net/host-lookup.ts';
import { isLoopbackHost, isPublicAddress } from '../../net/public-address.ts';
import { ProviderError } from './contract.ts';
import type { ProviderOutput, RemoteProviderId } from './contract.ts';

/** Redirects followed by hand (each hop's address checked like the first). */
export const MAX_OUTPUT_REDIRECTS = 5;

/** The master types the pipeline takes from a provider, by kind. */
const ACCEPTED: Readonly<Record<'video' | 'image', readonly string[]>> = {
  video: ['video/mp4', 'video/webm'],
  image: ['image/png', 'image/jpeg', 'image/webp'],
};
const EXTENSION: Readonly<Record<string, string>> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
};

export interface DownloadPolicy {
  /** Largest output accepted (CONTENT_LIMITS upload limits by kind). */
  maxBytes: number;
  /** An output that sends nothing for this long is given up on (then resumed, within `attempts`). */
  stallMs: number;
  /** Connections tried per output: the first plus Range resumes after a cut or a stall. */
  attempts: number;
  /**
   * Whether output URLs may point at loopback and private addresses. Off in production: an output
   * URL comes from a third party, and following it to our own network would be SSRF. On only when
   * the provider's base URL was itself overridden to such an address (a local proxy or a fake),
   * see `outputsMayBePrivate`.
   */
  allowPrivate: boolean;
  lookup: HostLookup;
}

/** A master file fetched and checked: its sniffed type, and what ffprobe read (the pipeline reuses it). */
export interface MasterFile {
  path: string;
  mime: string;
  probed: ProbeResult;
}

/**
 * Output URLs may be private exactly when the operator pointed the provider's base URL at a
 * loopback or private address (`CLIPDESK_<ID>_BASE_URL=http://127.0.0.1:…`): whoever answers
 * there is the operator's own machine or network, and its file URLs are as trusted as it is.
 */
export function outputsMayBePrivate(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return false;
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return false;
  }
  return isLoopbackHost(host) || (isIP(host) !== 0 && !isPublicAddress(host));
}

/**
 * Writes one provider output to `dir` as `output-<index>.<ext>` and checks it is the declared
 * media: the leading bytes must sniff as an accepted type of `kind`, and ffprobe must read it as
 * that type (a video with a picture and a duration). Every failure is a ProviderError naming the
 * provider: 'malformed' for what is not the media or too large, 'failed' for a download that
 * could not complete.
 */
export async function fetchOutput(
  provider: RemoteProviderId,
  output: ProviderOutput,
  kind: 'video' | 'image',
  dir: string,
  index: number,
  policy: DownloadPolicy,
  signal: AbortSignal,
): Promise<MasterFile> {
  const partial = `${dir}/output-${index}.partial`;
  try {
    if ('data' in output) {
      if (output.data.length > policy.maxBytes) throw tooLarge(provider, policy.maxBytes);
      await writeFile(partial, output.data);
    } else {
      await download(provider, output, partial, policy, signal);
    }
    const { mime, probed } = await checkMedia(provider, partial, kind, signal);
    const path = `${dir}/output-${index}.${EXTENSION[mime] ?? 'bin'}`;
    await rename(partial, path);
    return { path, mime, probed };
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

async function checkMedia(
  provider: RemoteProviderId,
  path: string,
  kind: 'video' | 'image',
  signal: AbortSignal,
): Promise<{ mime: string; probed: ProbeResult }> {
  const handle = await open(path, 'r');
  const head = Buffer.alloc(SNIFF_BYTES);
  let length: number;
  try {
    ({ bytesRead: length } = await handle.read(head, 0, SNIFF_BYTES, 0));
  } finally {
    await handle.close();
  }
  const sniffed = sniffMime(head.subarray(0, length));
  if (!sniffed || !ACCEPTED[kind].includes(sniffed.mime)) {
    throw new ProviderError(
      provider,
      'malformed',
      `${provider} returned an output that is not ${kind === 'image' ? 'an image' : 'a video'} (${sniffed ? sniffed.mime : 'unrecognised content'})`,
    );
  }
  let why: string | null;
  let facts: ProbeResult | undefined;
  try {
    facts = await probe(path, { signal, timeoutMs: 60_000 });
    why = implausibleDecode(head.subarray(0, length), facts);
    if (why === null && (!facts.hasVideo || facts.width === 0)) why = 'it has no picture';
    if (why === null && kind === 'video' && !(facts.durationSeconds > 0)) why = 'it has no duration';
  } catch (error) {
    if (signal.aborted) throw error;
    why = 'ffprobe cannot read it';
  }
  if (why !== null || facts === undefined)
    throw new ProviderError(provider, 'malformed', `${provider} returned a ${kind} that is broken: ${why ?? ''}`);
  return { mime: sniffed.mime, probed: facts };
}

/**
 * Streams a URL to `path`, following at most MAX_OUTPUT_REDIRECTS redirects by hand. A connection
 * that breaks or stalls is picked up where it stopped with `Range` (and `If-Range`, so a file that
 * changed meanwhile is fetched whole), within `policy.attempts` connections.
 */
async function download(
  provider: RemoteProviderId,
  output: { url: string; headers?: Record<string, string> },
  path: string,
  policy: DownloadPolicy,
  signal: AbortSignal,
): Promise<void> {
  const agent = guardedAgent(policy);
  try {
    let url = parseUrl(provider, output.url);
    let validator: string | undefined;
    let lastError = '';
    for (let attempt = 0; attempt < policy.attempts; attempt++) {
      const have = attempt === 0 ? 0 : await sizeOf(path);
      const headers: Record<string, string> = { ...output.headers };
      if (have > 0) {
        headers['range'] = `bytes=${have}-`;
        if (validator !== undefined) headers['if-range'] = validator;
      }
      const stalled = new AbortController();
      const connection = AbortSignal.any([signal, stalled.signal]);
      let response: Awaited<ReturnType<typeof request>>;
      try {
        ({ response, url } = await follow(provider, url, headers, agent, connection, policy, stalled));
      } catch (error) {
        if (signal.aborted || error instanceof ProviderError) throw error;
        lastError = describe(error, stalled.signal.aborted, policy.stallMs);
        continue;
      }
      const status = response.statusCode;
      if (status === 416 && have > 0) {
        // Asked past the end: what we have is the whole file.
        await response.body.dump().catch(() => undefined);
        return;
      }
      if (status !== 200 && status !== 206) {
        await response.body.dump().catch(() => undefined);
        // A server error may pass; anything else (gone, forbidden) will not.
        if (status >= 500) {
          lastError = `HTTP ${status}`;
          continue;
        }
        // Outputs live a limited time at the provider (Replicate deletes them an hour after the
        // prediction; Runway's signed URLs last a day or two): a file that is gone or whose
        // signature lapsed has expired, which is not a malformed answer.
        if (status === 403 || status === 404 || status === 410) {
          throw new ProviderError(
            provider,
            'expired',
            `${provider}: the provider's output expired (its URL answered HTTP ${status})`,
            { status },
          );
        }
        throw new ProviderError(provider, 'malformed', `${provider}'s output URL answered HTTP ${status}`, { status });
      }
      const resumed = status === 206 && have > 0 && rangeStart(response.headers['content-range']) === have;
      if (status === 206 && !resumed) {
        discard(response.body);
        throw new ProviderError(
          provider,
          'malformed',
          `${provider}'s output URL answered a range that was not asked for`,
        );
      }
      const etag = header(response.headers['etag']);
      validator = etag !== undefined && !etag.startsWith('W/') ? etag : header(response.headers['last-modified']);
      const total = resumed ? have + contentLength(response.headers) : contentLength(response.headers);
      if (total > policy.maxBytes) {
        discard(response.body);
        throw tooLarge(provider, policy.maxBytes);
      }
      let received = resumed ? have : 0;
      let timer = setTimeout(() => stalled.abort(), policy.stallMs);
      const out = createWriteStream(path, { flags: resumed ? 'a' : 'w' });
      try {
        await receive(response.body, out, (chunk) => {
          clearTimeout(timer);
          timer = setTimeout(() => stalled.abort(), policy.stallMs);
          received += chunk.length;
          return received > policy.maxBytes ? tooLarge(provider, policy.maxBytes) : null;
        });
        const expected = total > 0 ? total : received;
        if (received >= expected) return;
        lastError = `the connection closed after ${received} of ${expected} bytes`;
      } catch (error) {
        if (signal.aborted || error instanceof ProviderError) throw error;
        lastError = describe(error, stalled.signal.aborted, policy.stallMs);
      } finally {
        clearTimeout(timer);
        // Ended, not destroyed: every byte that arrived reaches the file, so a Range resume
        // starts exactly where the connection broke.
        await new Promise<void>((resolve) => out.end(resolve));
      }
    }
    throw new ProviderError(
      provider,
      'failed',
      `${provider}'s output could not be downloaded in ${policy.attempts} attempts (${lastError})`,
    );
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/**
 * Copies a response body into `out` as it arrives (flowing, so nothing sits unread in the body
 * when the connection breaks); `check` may refuse a chunk. Resolves at the body's end, rejects on
 * its error or a refusal.
 */
function receive(body: Readable, out: WriteStream, check: (chunk: Buffer) => Error | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      body.off('data', onData);
      discard(body);
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      const refused = check(chunk);
      if (refused) return fail(refused);
      if (!out.write(chunk)) {
        body.pause();
        out.once('drain', () => body.resume());
      }
    };
    body.on('data', onData);
    body.once('end', () => resolve());
    body.once('error', fail);
    out.once('error', fail);
  });
}

/** One request, redirects followed by hand, each hop checked before it is connected to. */
async function follow(
  provider: RemoteProviderId,
  start: URL,
  headers: Record<string, string>,
  agent: Agent,
  signal: AbortSignal,
  policy: DownloadPolicy,
  stalled: AbortController,
): Promise<{ response: Awaited<ReturnType<typeof request>>; url: URL }> {
  let url = start;
  for (let hop = 0; ; hop++) {
    checkAddress(provider, url, policy);
    // A server that accepts the connection and never answers counts as a stall too.
    const timer = setTimeout(() => stalled.abort(), policy.stallMs);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, { method: 'GET', headers, signal, dispatcher: agent });
    } finally {
      clearTimeout(timer);
    }
    const location = header(response.headers['location']);
    if (![301, 302, 303, 307, 308].includes(response.statusCode) || location === undefined) return { response, url };
    await response.body.dump().catch(() => undefined);
    if (hop >= MAX_OUTPUT_REDIRECTS) {
      throw new ProviderError(
        provider,
        'malformed',
        `${provider}'s output URL redirects more than ${MAX_OUTPUT_REDIRECTS} times`,
      );
    }
    const next = parseUrl(provider, new URL(location, url).href);
    // Headers that carry the provider's key (Google's file URLs) never follow a redirect elsewhere.
    if (next.origin !== url.origin)
      for (const name of Object.keys(headers)) if (name !== 'range' && name !== 'if-range') delete headers[name];
    url = next;
  }
}

function parseUrl(provider: RemoteProviderId, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProviderError(provider, 'malformed', `${provider} returned an output URL that does not parse`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProviderError(provider, 'malformed', `${provider} returned an output URL that is not http(s)`);
  }
  return url;
}

function checkAddress(provider: RemoteProviderId, url: URL, policy: DownloadPolicy): void {
  if (policy.allowPrivate) return;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isLoopbackHost(host) || (isIP(host) !== 0 && !isPublicAddress(host))) throw privateAddress(provider, host);
}

function privateAddress(provider: RemoteProviderId, what: string): ProviderError {
  return new ProviderError(
    provider,
    'malformed',
    `${provider} returned an output URL at a private address (${what}); only public addresses are fetched`,
  );
}

/** The address check made where the connection is made, so DNS rebinding cannot slip past it. */
function guardedAgent(policy: DownloadPolicy): Agent {
  if (policy.allowPrivate) return new Agent();
  return new Agent({
    connect: {
      lookup: ((hostname, options, callback) => {
        const fail = (error: Error) => callback(error, '', 0);
        policy.lookup(hostname).then((found) => {
          const bad = found.find((a) => !isPublicAddress(a.address));
          if (found.length === 0) return fail(new Error(`${hostname} has no address`));
          if (bad) return fail(new Error(`${hostname} resolves to the private address ${bad.address}`));
          if (options.all === true) callback(null, found);
          else callback(null, found[0]?.address ?? '', found[0]?.family ?? 4);
        }, fail);
      }) satisfies LookupFunction,
    },
  });
}

function tooLarge(provider: RemoteProviderId, max: number): ProviderError {
  return new ProviderError(provider, 'malformed', `${provider} returned an output larger than ${max} bytes`);
}

function describe(error: unknown, stalled: boolean, stallMs: number): string {
  if (stalled) return `no data for ${stallMs} ms`;
  return error instanceof Error ? error.message : String(error);
}

async function sizeOf(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.size,
    () => 0,
  );
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function contentLength(headers: Record<string, string | string[] | undefined>): number {
  const n = Number(header(headers['content-length']) ?? NaN);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** `bytes 100-199/200` → 100. */
function rangeStart(value: string | string[] | undefined): number {
  const m = /^bytes (\d+)-/.exec(header(value) ?? '');
  return m ? Number(m[1]) : -1;
}

/** Drops a body not wanted; its abort error has a listener, so it is not an uncaught exception. */
function discard(body: { on(event: 'error', fn: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => undefined);
  body.destroy();
}
