/**
 * How the API client talks to the service, below its resources: the key on the base URL's origin
 * only, deadlines, the rate window's gate, retries and 429 waits, the error body, and the
 * response's schema check. The resource calls (media.ts, generation-calls.ts, …) go through it.
 */
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { systemClock } from '../../../shared/clock.ts';
import type { Clock } from '../../../shared/clock.ts';
import { ErrorBody, IDEMPOTENCY_HEADER } from '../../../shared/api/index.ts';
import type { ApiClientOptions, FetchOptions, RawResponse, RequestOptions } from './client-types.ts';
import { ServiceError, errorCodeFor } from './errors.ts';
import { createApiDispatcher } from './dispatcher.ts';
import { DEFAULT_POLL } from './generations.ts';
import type { PollPolicy } from './generations.ts';
import { RateLimitTracker } from './rate-limit.ts';
import { DEFAULT_RETRY_POLICY, RetryBudget, rateLimitDelay, realSleep, takeBackoff } from './retry.ts';
import type { RetryPolicy, Sleep } from './retry.ts';

export interface Transport {
  readonly baseUrl: string;
  readonly origin: string;
  readonly dispatcher: Dispatcher;
  /** The client made its dispatcher, so dispose() closes it. */
  readonly ownDispatcher: boolean;
  readonly clock: Clock;
  readonly sleep: Sleep;
  readonly random: () => number;
  readonly policy: RetryPolicy;
  readonly pollPolicy: PollPolicy;
  readonly defaultTimeoutMs: number;
  readonly userAgent: string;
  readonly rate: RateLimitTracker;
  readonly getKey: ApiClientOptions['getKey'];
  /** Tells (once per field) of an extension field the service sent malformed and the client dropped. */
  readonly note: (line: string) => void;
}

export interface CallSpec<T> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  schema: z.ZodType<T>;
  /** A schema per status where a 2xx status changes the shape (202 vs 200); `schema` otherwise. */
  schemaFor?: (status: number) => z.ZodType<T>;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  /** Retry 5xx too (idempotent reads only). */
  retryServerErrors: boolean;
  options: RequestOptions | undefined;
  /** Deadline when the caller gives none; undefined = no deadline. */
  defaultTimeoutMs: number | undefined;
  /**
   * False for a request the service does not count against the rate limits (a generation's
   * status, docs/api.md "What counts against the rate limits"): it is never held back by a spent
   * window, and takes no slot of it. A service that counts it anyway answers 429, which waits as
   * any 429 does.
   */
  rateCounted?: boolean;
}

const RETRYABLE_STATUS_GET = new Set([500, 502, 503, 504]);
const RETRYABLE_STATUS_POST = new Set([502, 504]);

export function createTransport(options: ApiClientOptions): Transport {
  const base = new URL(options.baseUrl);
  const clock = options.clock ?? systemClock;
  const noticed = new Set<string>();
  return {
    baseUrl: base.href.replace(/\/+$/, ''),
    origin: base.origin,
    ownDispatcher: options.dispatcher === undefined,
    dispatcher: options.dispatcher ?? createApiDispatcher(),
    clock,
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    policy: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    pollPolicy: { ...DEFAULT_POLL, ...options.poll },
    defaultTimeoutMs: options.defaultTimeoutMs ?? 120_000,
    userAgent: options.userAgent ?? 'clipdesk/0.1',
    rate: new RateLimitTracker(clock),
    getKey: options.getKey,
    // Once per field, whether a list or a single record sent it: 100 models with one bad field are one line.
    note: (line) => {
      const key = line.replace(/result\.(models|providers)\.\d+\./, 'result.').replace(/ \(.*$/, '');
      if (noticed.has(key)) return;
      noticed.add(key);
      options.onNotice?.(line);
    },
  };
}

async function authHeaders(t: Transport, url: URL, wanted: boolean): Promise<Record<string, string>> {
  if (!wanted || url.origin !== t.origin) return {};
  const key = await t.getKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

export function deadline(
  opts: RequestOptions | undefined,
  fallback: number | undefined,
): {
  signal: AbortSignal | undefined;
  timeout: AbortSignal | undefined;
} {
  const ms = opts?.timeoutMs ?? fallback;
  const timeout = ms === undefined ? undefined : AbortSignal.timeout(ms);
  const signals = [opts?.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
  return {
    signal: signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals),
    timeout,
  };
}

function abortError(
  opts: RequestOptions | undefined,
  timeout: AbortSignal | undefined,
  cause: unknown,
): ServiceError | null {
  if (opts?.signal?.aborted) return new ServiceError('canceled', 'The request was cancelled', { cause });
  if (timeout?.aborted) return new ServiceError('timeout', 'The request did not finish before its deadline', { cause });
  return null;
}

/** Waits until the rate-limit window has room, so no request is sent that must get a 429. */
async function gate(
  t: Transport,
  signal: AbortSignal | undefined,
  what: string,
  onWait: RequestOptions['onWait'] | undefined,
): Promise<void> {
  for (;;) {
    const wait = t.rate.reserve();
    if (wait <= 0) return;
    const ms = Math.min(wait, t.policy.maxRateLimitWaitMs) + Math.round(t.random() * 250);
    onWait?.({ reason: 'rate_window', ms, what });
    await t.sleep(ms, signal);
  }
}

async function readErrorBody(
  res: Dispatcher.ResponseData,
): Promise<{ message: string; code?: string; retryAfter?: number }> {
  let text = '';
  try {
    text = await res.body.text();
  } catch {
    // The message is a courtesy; the status alone still tells us what happened.
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const body = ErrorBody.safeParse(parsed);
  const header = res.headers['retry-after'];
  const headerSeconds = Number(Array.isArray(header) ? header[0] : header);
  if (body.success) {
    return {
      message: body.data.message,
      code: body.data.code,
      ...(body.data.retry_after !== undefined
        ? { retryAfter: body.data.retry_after }
        : Number.isFinite(headerSeconds)
          ? { retryAfter: headerSeconds }
          : {}),
    };
  }
  const loose = parsed as { message?: unknown; error?: { message?: unknown } } | undefined;
  const message =
    typeof loose?.message === 'string'
      ? loose.message
      : typeof loose?.error?.message === 'string'
        ? loose.error.message
        : `The service answered HTTP ${res.statusCode}`;
  return { message, ...(Number.isFinite(headerSeconds) ? { retryAfter: headerSeconds } : {}) };
}

/** A GET: idempotent, so 5xx answers are retried too. */
export function read<T>(
  t: Transport,
  path: string,
  schema: z.ZodType<T>,
  options: RequestOptions | undefined,
  query?: CallSpec<T>['query'],
  rateCounted = true,
): Promise<T> {
  return call(t, {
    method: 'GET',
    path,
    query,
    schema,
    retryServerErrors: true,
    options,
    defaultTimeoutMs: t.defaultTimeoutMs,
    rateCounted,
  });
}

/** One HTTP exchange's outcome: the parsed JSON, or what to do about the failure. */
type Attempt = { data: unknown; status: number } | { retry: true };

/** One call's retries so far, and the budget their waits draw from (retry.ts). */
interface RetryCounts {
  failures: number;
  rateLimited: number;
  readonly budget: RetryBudget;
}

/**
 * The backoff before the next try after a failure (retry.ts), told to the caller before it is
 * waited; null when the retries or their budget ran out.
 */
function nextBackoff<T>(t: Transport, spec: CallSpec<T>, counts: RetryCounts, failure: string): number | null {
  const wait = takeBackoff(counts.failures, t.policy.maxRetries, t.policy, counts.budget, t.random);
  if (wait === null) return null;
  counts.failures++;
  spec.options?.onWait?.({ reason: 'retry', ms: wait, what: `${spec.method} ${spec.path}`, message: failure });
  return wait;
}

/**
 * An error answer: a 429 waits (Retry-After) and asks again, a retryable 5xx backs off and asks
 * again, anything else throws the service's error.
 */
async function onErrorStatus<T>(
  t: Transport,
  spec: CallSpec<T>,
  res: Dispatcher.ResponseData,
  signal: AbortSignal | undefined,
  counts: RetryCounts,
): Promise<{ retry: true }> {
  const err = await readErrorBody(res);
  const code = errorCodeFor(res.statusCode, err.code);
  const rateWait =
    code === 'rate_limit_exceeded' && counts.rateLimited < t.policy.maxRateLimitRetries
      ? counts.budget.take(rateLimitDelay(err.retryAfter, t.policy, t.random))
      : null;
  if (rateWait !== null) {
    counts.rateLimited++;
    const wait = rateWait;
    // A rate window that ran out holds back every request; a concurrency limit (the window
    // still has room) holds back only this one.
    const windowSpent = (t.rate.current.remaining ?? 0) <= 0;
    if (windowSpent) t.rate.exhaustUntil(t.clock.now() + wait);
    spec.options?.onWait?.({
      reason: 'rate_limit',
      ms: wait,
      what: `${spec.method} ${spec.path}`,
      message: err.message,
    });
    await t.sleep(wait, signal);
    if (windowSpent) t.rate.release();
    return { retry: true };
  }
  const retryable = (spec.retryServerErrors ? RETRYABLE_STATUS_GET : RETRYABLE_STATUS_POST).has(res.statusCode);
  const backoff = retryable ? nextBackoff(t, spec, counts, err.message) : null;
  if (backoff !== null) {
    await t.sleep(backoff, signal);
    return { retry: true };
  }
  throw new ServiceError(code, err.message, {
    status: res.statusCode,
    ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
  });
}

async function attempt<T>(
  t: Transport,
  spec: CallSpec<T>,
  url: URL,
  body: string | undefined,
  signal: AbortSignal | undefined,
  counts: RetryCounts,
): Promise<Attempt> {
  if (spec.rateCounted !== false) await gate(t, signal, `${spec.method} ${spec.path}`, spec.options?.onWait);
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': t.userAgent,
    ...spec.headers,
    ...(await authHeaders(t, url, true)),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (spec.idempotencyKey) headers[IDEMPOTENCY_HEADER.toLowerCase()] = spec.idempotencyKey;
  const res = await request(url, { method: spec.method, headers, body, dispatcher: t.dispatcher, signal });
  t.rate.update(res.headers);
  if (res.statusCode >= 400) return onErrorStatus(t, spec, res, signal, counts);
  const text = await res.body.text();
  try {
    return { data: text === '' ? {} : JSON.parse(text), status: res.statusCode };
  } catch (cause) {
    throw new ServiceError(
      'invalid_response',
      `The service sent a response that is not JSON (HTTP ${res.statusCode})`,
      {
        status: res.statusCode,
        cause,
      },
    );
  }
}

export async function call<T>(t: Transport, spec: CallSpec<T>): Promise<T> {
  const url = new URL(t.baseUrl + spec.path);
  for (const [name, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  const { signal, timeout } = deadline(spec.options, spec.defaultTimeoutMs);
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const counts: RetryCounts = {
    failures: 0,
    rateLimited: 0,
    budget: spec.options?.retryBudget ?? new RetryBudget(t.policy.maxTotalWaitMs),
  };
  for (;;) {
    let answer: Attempt;
    try {
      answer = await attempt(t, spec, url, body, signal, counts);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      const aborted = abortError(spec.options, timeout, error);
      if (aborted) throw aborted;
      const backoff = nextBackoff(t, spec, counts, describeNetworkError(error));
      if (backoff !== null) {
        try {
          await t.sleep(backoff, signal);
        } catch (sleepError) {
          throw abortError(spec.options, timeout, sleepError) ?? sleepError;
        }
        continue;
      }
      throw new ServiceError(
        'network_error',
        `Could not reach the service at ${t.origin}: ${describeNetworkError(error)}`,
        {
          cause: error,
        },
      );
    }
    if ('retry' in answer) continue;
    const parsed = (spec.schemaFor?.(answer.status) ?? spec.schema).safeParse(answer.data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ServiceError(
        'invalid_response',
        `The service's response to ${spec.method} ${spec.path} does not match the interface` +
          (issue ? ` (${issue.path.join('.') || 'body'}: ${issue.message})` : ''),
        { status: answer.status },
      );
    }
    return parsed.data;
  }
}

/** Any URL (media URLs, signed upload URLs). The key goes only to the base URL's origin. */
export async function fetchRaw(t: Transport, target: string, opts: FetchOptions = {}): Promise<RawResponse> {
  const { signal, timeout } = deadline(opts, undefined);
  let url = new URL(target);
  let method = opts.method ?? 'GET';
  let body = opts.body ?? null;
  const maxRedirects = opts.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    let res: Dispatcher.ResponseData;
    try {
      const sameOrigin = url.origin === t.origin;
      if (sameOrigin && opts.rateCounted !== false) await gate(t, signal, `${method} ${url.pathname}`, opts.onWait);
      const headers: Record<string, string> = {
        'user-agent': t.userAgent,
        ...opts.headers,
        ...(await authHeaders(t, url, opts.auth !== false)),
      };
      res = await request(url, { method, headers, body, dispatcher: t.dispatcher, signal });
      if (sameOrigin) t.rate.update(res.headers);
    } catch (error) {
      throw (
        abortError(opts, timeout, error) ??
        new ServiceError('network_error', `Could not reach ${url.origin}: ${describeNetworkError(error)}`, {
          cause: error,
        })
      );
    }
    const location = res.headers.location;
    if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string' && hop < maxRedirects) {
      await res.body.dump();
      url = new URL(location, url);
      if (res.statusCode === 303) {
        method = 'GET';
        body = null;
      }
      continue;
    }
    return { status: res.statusCode, headers: res.headers, body: res.body, url: url.href };
  }
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
