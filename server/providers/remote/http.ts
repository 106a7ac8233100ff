import { ProviderError } from './contract.ts';
import type { ProviderErrorClass, RemoteProviderId } from './contract.ts';

/**
 * What the adapters share about talking HTTP to a provider through its SDK: one fetch that turns
 * every failed answer into a `ProviderError` before the SDK sees it, the classes of HTTP statuses,
 * `Retry-After`, and keeping keys out of messages.
 */

/** A non-2xx answer, read (at most 64 KB of it). */
export interface HttpFailure {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const MAX_ERROR_BODY = 64 * 1024;

/** Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date). */
export function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The class of a failed answer by its status alone (the adapters refine it from the body). */
export function classOfStatus(status: number): ProviderErrorClass {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server';
  if (status === 400 || status === 404 || status === 409 || status === 413 || status === 422) return 'invalid_input';
  return 'failed';
}

/**
 * A failed answer the provider's body says nothing more specific about, classed by its status: a
 * refused key and a rate limit in the same words for every provider, anything else with `detail`.
 */
export function statusError(
  provider: RemoteProviderId,
  name: string,
  failure: HttpFailure,
  detail: string,
): ProviderError {
  const { status } = failure;
  const errorClass = classOfStatus(status);
  const retryAfter = retryAfterSeconds(failure.headers.get('retry-after'));
  const message =
    errorClass === 'auth'
      ? `${name} refused the key (HTTP ${status})`
      : errorClass === 'rate_limited'
        ? `${name} is rate limiting requests (HTTP 429)`
        : `${name} answered HTTP ${status}: ${detail}`;
  return new ProviderError(
    provider,
    errorClass,
    message,
    retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter },
  );
}

/** `text` with every occurrence of the key replaced (a provider may echo what it was sent). */
export function redact(text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
}

export interface GuardOptions {
  provider: RemoteProviderId;
  /** The provider's display name, for messages. */
  name: string;
  apiKey: string;
  /** The provider's reading of a failed answer. */
  describe(failure: HttpFailure): ProviderError;
}

/**
 * A `fetch` for an SDK client that makes one API call (the adapters make a client per call).
 *
 * Retrying belongs to the service's runner, which backs off with jitter and honours `Retry-After`:
 * both SDKs retry on their own (fal sleeps up to 30 s per attempt; Replicate's loop re-sends at once
 * and retries whatever the fetch throws), which would hide `Retry-After` and hammer a provider that
 * asked us to slow down. So this fetch answers the first failure — an HTTP error, or a network error
 * — with a `ProviderError`, and repeats that same error for any retry the SDK attempts on the same
 * client without sending anything. A `ProviderError` carries no `cause` chain of network error
 * codes, so fal's retry check (which walks `cause` for ECONNRESET and the like) leaves it alone.
 */
export function guardedFetch(options: GuardOptions): typeof fetch {
  let failed: ProviderError | undefined;
  return async (input, init) => {
    if (failed) throw failed;
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (err) {
      failed = networkError(options, err, init?.signal ?? undefined);
      throw failed;
    }
    if (response.ok) return response;
    const text = redact(await readCapped(response), options.apiKey);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const described = options.describe({ status: response.status, headers: response.headers, text, json });
    failed = new ProviderError(options.provider, described.errorClass, redact(described.message, options.apiKey), {
      status: response.status,
      ...(described.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: described.retryAfterSeconds }),
    });
    throw failed;
  };
}

function networkError(options: GuardOptions, err: unknown, signal: AbortSignal | undefined): ProviderError {
  if (signal?.aborted || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))) {
    return new ProviderError(options.provider, 'canceled', `${options.name}: the request was aborted`);
  }
  return new ProviderError(options.provider, 'server', `${options.name} could not be reached (${networkCode(err)})`);
}

/** The network error's code (ECONNREFUSED…), found along its `cause` chain, or its message. */
export function networkCode(err: unknown): string {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.message : 'network error';
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still says what it could.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_BODY);
}

/**
 * Any error out of an SDK call, as a `ProviderError`: ours pass through; a body that did not parse
 * is `malformed`; anything else (an SDK's own exception) is `failed`, its message kept without the key.
 */
export function normalizeError(
  provider: RemoteProviderId,
  name: string,
  apiKey: string,
  err: unknown,
  signal?: AbortSignal,
): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    return new ProviderError(provider, 'canceled', `${name}: the request was aborted`);
  }
  if (err instanceof SyntaxError) {
    return new ProviderError(provider, 'malformed', `${name} sent an answer that is not valid JSON`);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError(provider, 'failed', redact(`${name}: ${message}`, apiKey));
}

/** Short, single-line text from a provider for a message (bodies can be long or multi-line). */
/** Whether a call's signal ended by its own deadline (AbortSignal.timeout), not by a cancel. */
export function timedOut(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError';
}

export function excerpt(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
