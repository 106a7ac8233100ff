import { networkCode, redact } from '../../providers/remote/http.ts';

/**
 * One GET of a provider's listing, which is untrusted (docs/providers.md, "Syncing the catalog"):
 * at most `maxBytes` of body and `timeoutMs` for the whole answer, JSON only, and a failure said in
 * one line that never carries the key.
 */
export interface ListingLimits {
  /** Largest answer read, in bytes (default 8 MiB). */
  maxBytes: number;
  /** Longest wait for one answer, in milliseconds (default 30 s). */
  timeoutMs: number;
}

export const DEFAULT_LISTING_LIMITS: ListingLimits = { maxBytes: 8 * 1024 * 1024, timeoutMs: 30_000 };

/** A listing that could not be read; `message` is one line without the key. */
export class ListingError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'ListingError';
    if (status !== undefined) this.status = status;
  }
}

export async function fetchListing(
  url: string,
  request: { name: string; apiKey: string; authorization: string },
  limits: ListingLimits,
  signal?: AbortSignal,
): Promise<unknown> {
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const where = new URL(url).pathname;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: request.authorization, accept: 'application/json' },
      redirect: 'error',
      signal: combined,
    });
  } catch (error) {
    if (deadline.aborted)
      throw new ListingError(`${request.name} did not answer ${where} within ${limits.timeoutMs / 1000} s`);
    throw new ListingError(redact(`${request.name} could not be reached (${networkCode(error)})`, request.apiKey));
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const why =
      response.status === 401 || response.status === 403
        ? `${request.name} refused the key (HTTP ${response.status})`
        : `${request.name} answered HTTP ${response.status} for ${where}`;
    throw new ListingError(why, response.status);
  }
  const text = await readBounded(response, limits.maxBytes, request.name, deadline, limits.timeoutMs);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ListingError(`${request.name} sent a listing that is not valid JSON (${where})`);
  }
}

async function readBounded(
  response: Response,
  maxBytes: number,
  name: string,
  deadline: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ListingError(`${name} sent a listing larger than ${maxBytes} bytes`);
  }
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new ListingError(`${name} sent a listing larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof ListingError) throw error;
    if (deadline.aborted) throw new ListingError(`${name} did not finish its listing within ${timeoutMs / 1000} s`);
    throw new ListingError(`${name}'s listing was cut short`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Listing text as plain text: no control characters or markup, one line, at most `max` characters. */
export function plainText(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  const text = value
    .replace(/<[^>]*>/g, ' ')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}
