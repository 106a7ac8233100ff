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
  const deadline = answerDeadline(limits.timeoutMs, signal);
  const where = new URL(url).pathname;
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: request.authorization, accept: 'application/json' },
        redirect: 'error',
        signal: deadline.signal,
      });
    } catch (error) {
      if (deadline.expired())
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
  } finally {
    deadline.clear();
  }
}

/**
 * The one deadline of an answer, headers and body alike (docs/providers.md: 30 s per answer). A
 * timer of our own, held until cleared, aborts it: `AbortSignal.timeout` (and `AbortSignal.any`
 * over it) is dropped with its signal once nothing holds that signal strongly, and fetch holds
 * it only weakly while the body is read, so a slow body could outlive it after a garbage collection.
 */
interface AnswerDeadline {
  readonly signal: AbortSignal;
  /** Settles (rejects) when the deadline passes or the caller aborts; for racing a read. */
  readonly passed: Promise<never>;
  expired(): boolean;
  clear(): void;
}

function answerDeadline(timeoutMs: number, outer?: AbortSignal): AnswerDeadline {
  const controller = new AbortController();
  let expired = false;
  let fail!: (reason: unknown) => void;
  const passed = new Promise<never>((_resolve, reject) => (fail = reject));
  passed.catch(() => undefined);
  const abort = (reason: unknown): void => {
    fail(reason);
    controller.abort(reason);
  };
  const timer = setTimeout(() => {
    expired = true;
    abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onOuter = (): void => abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    passed,
    expired: () => expired,
    clear() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

async function readBounded(
  response: Response,
  maxBytes: number,
  name: string,
  deadline: AnswerDeadline,
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
      // Each read races the deadline itself: a body that drips never outlasts it.
      const { done, value } = await Promise.race([reader.read(), deadline.passed]);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new ListingError(`${name} sent a listing larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof ListingError) throw error;
    if (deadline.expired()) throw new ListingError(`${name} did not finish its listing within ${timeoutMs / 1000} s`);
    throw new ListingError(`${name}'s listing was cut short`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Listing text as plain text: no control characters or markup, one line, at most `max` characters.
 * Markup is every `<` that opens a tag as HTML reads one (a letter, `/`, `!` or `?` after it), up
 * to its `>` or, when it has none, to the end: an unclosed `<img src=x onerror=…` is markup too.
 */
export function plainText(value: unknown, max: number): string {
  if (typeof value !== 'string') return '';
  const text = value
    .replace(/<[A-Za-z!/?][^>]*(?:>|$)/g, ' ')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}
