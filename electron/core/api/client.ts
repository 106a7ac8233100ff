import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { systemClock } from '../../../shared/clock.ts';
import type { Clock } from '../../../shared/clock.ts';
import {
  ErrorBody,
  GenerationAccepted,
  LegacyGenerationAccepted,
  GenerationListResponse,
  GenerationRecordResponse,
  GenerationResponse,
  IDEMPOTENCY_HEADER,
  MediaItem as MediaItemSchema,
  MediaListResponse,
  RoutingPreviewResponse,
  SpecModelRecord,
  SpecProviderRecord,
  SpecUploadTicket,
  SpecUsageResponse,
  readModelRecord,
  readProviderRecord,
  readUploadTicket,
  readUsage,
} from '../../../shared/api/index.ts';
import type {
  Generation,
  GenerationStatus,
  ImageGenerationInput,
  MediaItem,
  MediaListQueryInput,
  ModelRecord,
  ProviderRecord,
  RetainRequest,
  RoutingPreview,
  UploadRequest,
  UploadTicket,
  Usage,
  VideoGenerationInput,
} from '../../../shared/api/index.ts';
import type { VideoVariationRequest } from '../../../shared/api/index.ts';
import { generationResult, pollDelay, DEFAULT_POLL } from './generations.ts';
import type { GenerationStart, PollPolicy, WaitNotice } from './generations.ts';
import { ServiceError, errorCodeFor } from './errors.ts';
import { createApiDispatcher } from './dispatcher.ts';
import { RateLimitTracker } from './rate-limit.ts';
import type { RateLimitState } from './rate-limit.ts';
import { DEFAULT_RETRY_POLICY, backoffDelay, rateLimitDelay, realSleep } from './retry.ts';
import type { RetryPolicy, Sleep } from './retry.ts';

export type HeaderBag = Record<string, string | string[] | undefined>;
export type KeyGetter = () => string | null | undefined | Promise<string | null | undefined>;

export interface ApiClientOptions {
  /** `{base_url}`, already ending in the version prefix, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Asked before every request to the base URL's origin; never called for other origins. */
  getKey: KeyGetter;
  /** Defaults to a dedicated pool without undici's 300 s timeouts (closed by dispose()). */
  dispatcher?: Dispatcher;
  clock?: Clock;
  sleep?: Sleep;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  /** Polling of asynchronous generations (tests make it fast). */
  poll?: Partial<PollPolicy>;
  /** Deadline of ordinary JSON calls; generations and streams have none unless given. */
  defaultTimeoutMs?: number;
  userAgent?: string;
  /**
   * Told once per kind of extension field the service sent malformed and the client dropped
   * (docs/api.md "Extensions"); defaults to nothing, as the call itself goes on.
   */
  onNotice?: (line: string) => void;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Overall deadline of the call, retries and waits included. */
  timeoutMs?: number;
  /**
   * Told before every wait the client makes on the service's word (a 429's Retry-After, a spent
   * rate window), so no caller waits in silence.
   */
  onWait?: (notice: WaitNotice) => void;
}

/** Hooks of a generation that the service runs asynchronously (202 to `Prefer: respond-async`). */
export interface AsyncGenerationHooks {
  /** The service accepted it and gave it an id: persist the id before anything else happens. */
  onAccepted?: (generation: Generation) => void;
  /** Every poll whose answer differs from the last (step, queue position, progress). */
  onUpdate?: (generation: Generation) => void;
}

export interface GenerationOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`. The caller creates it once per generation and persists it (the job
   * journal does), so a retry — in this process or after a restart — is never charged twice.
   */
  idempotencyKey: string;
}

/** A generation call that follows an asynchronous answer to its end. */
export interface FollowedGenerationOptions extends GenerationOptions, AsyncHooks {}
type AsyncHooks = AsyncGenerationHooks;

export type VideoVariationInput = z.input<typeof VideoVariationRequest>;
export type GenerationOperation = 'videos.generations' | 'images.generations' | 'videos.variations';

export interface GenerationListQuery extends PageInput {
  status?: GenerationStatus;
}
export interface GenerationPage {
  total: number;
  generations: Generation[];
}

export interface FetchOptions extends RequestOptions {
  method?: 'GET' | 'HEAD' | 'PUT' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer | Readable | null;
  /** Attach the key when the URL is on the base URL's origin (default true). Never for other origins. */
  auth?: boolean;
  /** Redirects to follow; the key is re-decided for every hop. Default 5. */
  maxRedirects?: number;
}

/** A streamed response: the caller must consume or destroy `body`. */
export interface RawResponse {
  status: number;
  headers: HeaderBag;
  /** A Readable with fetch-like helpers (`text()`, `json()`, `dump()`). */
  body: Dispatcher.ResponseData['body'];
  /** The final URL after redirects. */
  url: string;
}

export interface MediaPage {
  total: number;
  medias: MediaItem[];
}
export interface ModelPage {
  total: number;
  models: ModelRecord[];
}
export interface ProviderPage {
  total: number;
  providers: ProviderRecord[];
}
export interface PageInput {
  limit?: number;
  page?: number;
}

export interface ApiClientState {
  rateLimit: RateLimitState;
  /** From the last `GET /usage`; null until then. */
  tier: string | null;
}

export interface ApiClient {
  readonly baseUrl: string;
  readonly origin: string;
  readonly rateLimit: RateLimitState;
  readonly tier: string | null;
  /**
   * The account's own retention in days from the last `GET /usage` (custom limits included), or
   * null until then; the tier table's figure can be wrong for accounts with custom limits.
   */
  readonly retentionDays: number | null;
  listMedia(query?: MediaListQueryInput, options?: RequestOptions): Promise<MediaPage>;
  /** `GET /media/:id` (extension): one item, `{success, result: item}` (older servers: `data: [item]`). */
  getMedia(id: string, options?: RequestOptions): Promise<MediaItem>;
  /**
   * Sends `Prefer: respond-async`: a service with asynchronous mode answers 202 and the call
   * follows the generation (onAccepted, then polls with onUpdate) to its result; an older service
   * ignores the header and answers 200 with the result, as before.
   */
  generateVideo(input: VideoGenerationInput, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  generateImage(input: ImageGenerationInput, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  /** `POST /videos/variations` (docs/workflows.md), followed like generateVideo. */
  createVariations(input: VideoVariationInput, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  /** Submits with `Prefer: respond-async` and returns at once: accepted (202) or already done (200). */
  submitGeneration(
    operation: GenerationOperation,
    input: VideoGenerationInput | ImageGenerationInput | VideoVariationInput,
    options: GenerationOptions,
  ): Promise<GenerationStart>;
  getGeneration(id: string, options?: RequestOptions): Promise<Generation>;
  /** `DELETE /generations/:id`: the generation as it is after the cancel. */
  cancelGeneration(id: string, options?: RequestOptions): Promise<Generation>;
  listGenerations(query?: GenerationListQuery, options?: RequestOptions): Promise<GenerationPage>;
  /** Polls `GET /generations/:id` with backoff until it is final; resolves with the final record. */
  waitForGeneration(
    id: string,
    options?: RequestOptions & { onUpdate?: (generation: Generation) => void },
  ): Promise<Generation>;
  requestUpload(input: UploadRequest, options?: RequestOptions): Promise<UploadTicket>;
  completeUpload(id: string, options?: RequestOptions): Promise<MediaItem>;
  listModels(query?: PageInput, options?: RequestOptions): Promise<ModelPage>;
  getModel(id: string, options?: RequestOptions): Promise<ModelRecord>;
  listProviders(query?: PageInput, options?: RequestOptions): Promise<ProviderPage>;
  getProvider(id: string, options?: RequestOptions): Promise<ProviderRecord>;
  getUsage(options?: RequestOptions): Promise<Usage>;
  /**
   * `POST /routing/preview` (an extension, docs/api.md): what the generation body would get under each
   * routing mode, from the service's own routing. No charge; only the rate limit counts it.
   */
  previewRouting(input: VideoGenerationInput | ImageGenerationInput, options?: RequestOptions): Promise<RoutingPreview>;
  /** `POST /media/:id/retain` (extension). Returns the updated item when the service sends one. */
  retainMedia(id: string, input: RetainRequest, options?: RequestOptions): Promise<MediaItem | null>;
  /** `GET /openapi.json` (extension), or null when the service has none. */
  getOpenApi(options?: RequestOptions): Promise<Record<string, unknown> | null>;
  /**
   * `GET /media/:id/content` (extension): the authenticated download. Resolves with the raw
   * response whatever its status (206, 200, 412, 404 …), so a download manager can decide.
   */
  openMediaContent(id: string, options?: FetchOptions & { format?: string }): Promise<RawResponse>;
  /** Any URL (media URLs, signed upload URLs). The key goes only to the base URL's origin. */
  fetch(url: string, options?: FetchOptions): Promise<RawResponse>;
  onStateChange(listener: (state: ApiClientState) => void): () => void;
  dispose(): Promise<void>;
}

interface CallSpec<T> {
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
}

const RETRYABLE_STATUS_GET = new Set([500, 502, 503, 504]);
const RETRYABLE_STATUS_POST = new Set([502, 504]);

export function createApiClient(options: ApiClientOptions): ApiClient {
  const base = new URL(options.baseUrl);
  const baseUrl = base.href.replace(/\/+$/, '');
  const origin = base.origin;
  const ownDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createApiDispatcher();
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const pollPolicy: PollPolicy = { ...DEFAULT_POLL, ...options.poll };
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const userAgent = options.userAgent ?? 'clipdesk/0.1';
  const rate = new RateLimitTracker(clock);
  let tier: string | null = null;
  let retentionDays: number | null = null;
  const listeners = new Set<(state: ApiClientState) => void>();
  const emit = (): void => {
    const state = { rateLimit: rate.current, tier };
    for (const listener of listeners) listener(state);
  };
  rate.subscribe(emit);
  const noticed = new Set<string>();
  // Once per field, whether a list or a single record sent it: 100 models with one bad field are one line.
  const note = (line: string): void => {
    const key = line.replace(/result\.(models|providers)\.\d+\./, 'result.').replace(/ \(.*$/, '');
    if (noticed.has(key)) return;
    noticed.add(key);
    options.onNotice?.(line);
  };
  const modelSchema = (where: string) => SpecModelRecord.transform((m) => readModelRecord(m, where, note));
  const providerSchema = (where: string) => SpecProviderRecord.transform((p) => readProviderRecord(p, where, note));
  const ModelList = listOf('models', SpecModelRecord).transform((r) => ({
    total: r.total,
    models: r.items.map((m, i) => readModelRecord(m, `result.models.${i}`, note)),
  }));
  const ProviderList = listOf('providers', SpecProviderRecord).transform((r) => ({
    total: r.total,
    providers: r.items.map((p, i) => readProviderRecord(p, `result.providers.${i}`, note)),
  }));

  async function authHeaders(url: URL, wanted: boolean): Promise<Record<string, string>> {
    if (!wanted || url.origin !== origin) return {};
    const key = await options.getKey();
    return key ? { authorization: `Bearer ${key}` } : {};
  }

  function deadline(
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
    if (timeout?.aborted)
      return new ServiceError('timeout', 'The request did not finish before its deadline', { cause });
    return null;
  }

  /** Waits until the rate-limit window has room, so no request is sent that must get a 429. */
  async function gate(
    signal: AbortSignal | undefined,
    what: string,
    onWait: RequestOptions['onWait'] | undefined,
  ): Promise<void> {
    for (;;) {
      const wait = rate.reserve();
      if (wait <= 0) return;
      const ms = Math.min(wait, policy.maxRateLimitWaitMs) + Math.round(random() * 250);
      onWait?.({ reason: 'rate_window', ms, what });
      await sleep(ms, signal);
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
  function read<T>(
    path: string,
    schema: z.ZodType<T>,
    options: RequestOptions | undefined,
    query?: CallSpec<T>['query'],
  ): Promise<T> {
    return call({ method: 'GET', path, query, schema, retryServerErrors: true, options, defaultTimeoutMs });
  }

  async function call<T>(spec: CallSpec<T>): Promise<T> {
    const url = new URL(baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    }
    const { signal, timeout } = deadline(spec.options, spec.defaultTimeoutMs);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let failures = 0;
    let rateLimited = 0;
    for (;;) {
      let res: Dispatcher.ResponseData;
      let data: unknown;
      try {
        await gate(signal, `${spec.method} ${spec.path}`, spec.options?.onWait);
        const headers: Record<string, string> = {
          accept: 'application/json',
          'user-agent': userAgent,
          ...spec.headers,
          ...(await authHeaders(url, true)),
        };
        if (body !== undefined) headers['content-type'] = 'application/json';
        if (spec.idempotencyKey) headers[IDEMPOTENCY_HEADER.toLowerCase()] = spec.idempotencyKey;
        res = await request(url, { method: spec.method, headers, body, dispatcher, signal });
        rate.update(res.headers);
        if (res.statusCode >= 400) {
          const err = await readErrorBody(res);
          const code = errorCodeFor(res.statusCode, err.code);
          if (code === 'rate_limit_exceeded' && rateLimited < policy.maxRateLimitRetries) {
            rateLimited++;
            const wait = rateLimitDelay(err.retryAfter, policy, random);
            // A rate window that ran out holds back every request; a concurrency limit (the window
            // still has room) holds back only this one.
            const windowSpent = (rate.current.remaining ?? 0) <= 0;
            if (windowSpent) rate.exhaustUntil(clock.now() + wait);
            spec.options?.onWait?.({
              reason: 'rate_limit',
              ms: wait,
              what: `${spec.method} ${spec.path}`,
              message: err.message,
            });
            await sleep(wait, signal);
            if (windowSpent) rate.release();
            continue;
          }
          const retryable = (spec.retryServerErrors ? RETRYABLE_STATUS_GET : RETRYABLE_STATUS_POST).has(res.statusCode);
          if (retryable && failures < policy.maxRetries) {
            await sleep(backoffDelay(failures++, policy, random), signal);
            continue;
          }
          throw new ServiceError(code, err.message, {
            status: res.statusCode,
            ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
          });
        }
        const text = await res.body.text();
        try {
          data = text === '' ? {} : JSON.parse(text);
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
      } catch (error) {
        if (error instanceof ServiceError) throw error;
        const aborted = abortError(spec.options, timeout, error);
        if (aborted) throw aborted;
        if (failures < policy.maxRetries) {
          try {
            await sleep(backoffDelay(failures++, policy, random), signal);
          } catch (sleepError) {
            throw abortError(spec.options, timeout, sleepError) ?? sleepError;
          }
          continue;
        }
        throw new ServiceError(
          'network_error',
          `Could not reach the service at ${origin}: ${describeNetworkError(error)}`,
          {
            cause: error,
          },
        );
      }
      const parsed = (spec.schemaFor?.(res.statusCode) ?? spec.schema).safeParse(data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ServiceError(
          'invalid_response',
          `The service's response to ${spec.method} ${spec.path} does not match the interface` +
            (issue ? ` (${issue.path.join('.') || 'body'}: ${issue.message})` : ''),
          { status: res.statusCode },
        );
      }
      return parsed.data;
    }
  }

  async function fetchUrl(target: string, opts: FetchOptions = {}): Promise<RawResponse> {
    const { signal, timeout } = deadline(opts, undefined);
    let url = new URL(target);
    let method = opts.method ?? 'GET';
    let body = opts.body ?? null;
    const maxRedirects = opts.maxRedirects ?? 5;
    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      try {
        const sameOrigin = url.origin === origin;
        if (sameOrigin) await gate(signal, `${method} ${url.pathname}`, opts.onWait);
        const headers: Record<string, string> = {
          'user-agent': userAgent,
          ...opts.headers,
          ...(await authHeaders(url, opts.auth !== false)),
        };
        res = await request(url, { method, headers, body, dispatcher, signal });
        if (sameOrigin) rate.update(res.headers);
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

  const OPERATION_PATHS: Record<GenerationOperation, string> = {
    'videos.generations': '/videos/generations',
    'images.generations': '/images/generations',
    'videos.variations': '/videos/variations',
  };

  function submit(operation: GenerationOperation, input: unknown, opts: GenerationOptions): Promise<GenerationStart> {
    return call<GenerationStart>({
      method: 'POST',
      path: OPERATION_PATHS[operation],
      body: input,
      // RFC 7240: a service without asynchronous mode ignores the preference and answers 200.
      headers: { prefer: 'respond-async' },
      idempotencyKey: opts.idempotencyKey,
      schema: GenerationResponse.transform((response) => ({ async: false as const, response })),
      schemaFor: (status) =>
        status === 202
          ? z
              .union([
                GenerationAccepted.transform((body) => body.result),
                LegacyGenerationAccepted.transform((body) => body.data),
              ])
              .transform((generation) => ({ async: true as const, generation }))
          : GenerationResponse.transform((response) => ({ async: false as const, response })),
      retryServerErrors: false,
      options: opts,
      defaultTimeoutMs: undefined,
    });
  }

  async function waitFor(
    id: string,
    opts: RequestOptions & { onUpdate?: (generation: Generation) => void } = {},
  ): Promise<Generation> {
    const { signal } = deadline(opts, undefined);
    let last = '';
    let unchanged = 0;
    for (;;) {
      const generation = await client.getGeneration(id, { ...opts, timeoutMs: opts.timeoutMs ?? defaultTimeoutMs });
      const seen = `${generation.status}|${generation.queuePosition ?? ''}|${generation.progress ?? ''}`;
      if (seen !== last) {
        last = seen;
        unchanged = 0;
        opts.onUpdate?.(generation);
      } else unchanged++;
      if (FINAL.has(generation.status)) return generation;
      try {
        await sleep(pollDelay(unchanged, pollPolicy, random), signal);
      } catch (error) {
        throw (
          (opts.signal?.aborted ? new ServiceError('canceled', 'The request was cancelled', { cause: error }) : null) ??
          new ServiceError('timeout', 'The generation did not finish before its deadline', { cause: error })
        );
      }
    }
  }

  async function follow(
    operation: GenerationOperation,
    input: unknown,
    opts: FollowedGenerationOptions,
  ): Promise<GenerationResponse> {
    const start = await submit(operation, input, opts);
    if (!start.async) return start.response;
    opts.onAccepted?.(start.generation);
    opts.onUpdate?.(start.generation);
    const final = await waitFor(start.generation.id, opts);
    return generationResult(final);
  }

  const pageQuery = (q: PageInput | undefined): Record<string, number | undefined> => ({
    limit: q?.limit,
    page: q?.page,
  });
  const enc = encodeURIComponent;

  const client: ApiClient = {
    baseUrl,
    origin,
    get rateLimit() {
      return rate.current;
    },
    get tier() {
      return tier;
    },
    get retentionDays() {
      return retentionDays;
    },
    async listMedia(query, opts) {
      const res = await read('/media', MediaListResponse, opts, query);
      return { total: res.result.total, medias: res.result.medias };
    },
    async getMedia(id, opts) {
      try {
        return await read(`/media/${enc(id)}`, singleRecord(MediaItemSchema), opts);
      } catch (error) {
        // `GET /media/:id` is an extension (the spec's `/media/:id` completes an upload): a service
        // without it is asked its list, newest first.
        if (!isMissingEndpoint(error)) throw error;
        const listed = await findListedMedia(client, id, opts);
        if (listed === null) throw new ServiceError('not_found_error', `No media item ${id}`, { status: 404 });
        return listed;
      }
    },
    generateVideo(input, opts) {
      return follow('videos.generations', input, opts);
    },
    generateImage(input, opts) {
      return follow('images.generations', input, opts);
    },
    createVariations(input, opts) {
      return follow('videos.variations', input, opts);
    },
    submitGeneration: submit,
    getGeneration(id, opts) {
      return read(`/generations/${enc(id)}`, GenerationRecordResponse, opts).then((r) => r.result);
    },
    async cancelGeneration(id, opts) {
      // Canceling twice is harmless (a final generation stays as it is), so errors are retried.
      const res = await call({
        method: 'DELETE',
        path: `/generations/${enc(id)}`,
        schema: GenerationRecordResponse,
        retryServerErrors: true,
        options: opts,
        defaultTimeoutMs,
      });
      return res.result;
    },
    async listGenerations(query, opts) {
      const res = await read('/generations', GenerationListResponse, opts, {
        ...pageQuery(query),
        status: query?.status,
      });
      return { total: res.result.total, generations: res.result.generations };
    },
    waitForGeneration: waitFor,
    requestUpload(input, opts) {
      // Safe to retry: an unused ticket simply expires.
      return call({
        method: 'POST',
        path: '/media/upload',
        body: input,
        schema: singleRecord(SpecUploadTicket).transform((ticket) => readUploadTicket(ticket, note)),
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs,
      });
    },
    completeUpload(id, opts) {
      return call({
        method: 'POST',
        path: `/media/${enc(id)}`,
        body: {},
        schema: singleRecord(MediaItemSchema),
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs,
      });
    },
    listModels(query, opts) {
      return read('/models', ModelList, opts, pageQuery(query));
    },
    async getModel(id, opts) {
      try {
        return await read(`/models/${enc(safeDecode(id))}`, singleRecord(modelSchema('result')), opts);
      } catch (error) {
        // The spec names `/models/:id` without its method: a service may answer it 404 or 405 and
        // still list the model, so the list decides.
        if (!isMissingEndpoint(error)) throw error;
        const listed = await findListedModel(client, id, opts);
        if (listed === null) throw error;
        return listed;
      }
    },
    listProviders(query, opts) {
      return read('/providers', ProviderList, opts, pageQuery(query));
    },
    getProvider(id, opts) {
      return read(`/providers/${enc(id)}`, singleRecord(providerSchema('result')), opts);
    },
    async getUsage(opts) {
      const res = await read('/usage', SpecUsageResponse, opts);
      const usage = readUsage(res.result, note);
      retentionDays = usage.limits?.retentionDays ?? null;
      const seenTier = usage.tier ?? null;
      if (seenTier !== tier) {
        tier = seenTier;
        emit();
      }
      return usage;
    },
    async previewRouting(input, opts) {
      const res = await call({
        method: 'POST',
        path: '/routing/preview',
        body: input,
        schema: RoutingPreviewResponse,
        // Nothing happens on the service, so a 5xx may be asked again like a read.
        retryServerErrors: true,
        options: opts,
        defaultTimeoutMs,
      });
      return res.result;
    },
    async retainMedia(id, input, opts) {
      const res = await call({
        method: 'POST',
        path: `/media/${enc(id)}/retain`,
        body: input,
        schema: RetainResponse,
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs,
      });
      const data: unknown = res.result ?? (Array.isArray(res.data) ? res.data[0] : res.data);
      const item = MediaItemSchema.safeParse(data);
      return item.success ? item.data : null;
    },
    async getOpenApi(opts) {
      try {
        return await read('/openapi.json', OpenApiDocument, opts);
      } catch (error) {
        if (error instanceof ServiceError && (error.code === 'not_found_error' || error.code === 'invalid_response'))
          return null;
        throw error;
      }
    },
    openMediaContent(id, opts = {}) {
      const url = new URL(`${baseUrl}/media/${enc(id)}/content`);
      if (opts.format) url.searchParams.set('format', opts.format);
      return fetchUrl(url.href, opts);
    },
    fetch: fetchUrl,
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      listeners.clear();
      if (ownDispatcher) await dispatcher.close();
    },
  };
  return client;
}

const RetainResponse = z.looseObject({
  success: z.literal(true),
  result: z.unknown().optional(),
  data: z.unknown().optional(),
});

/**
 * A single record: under `result` (docs/api.md, "Envelope of single records"), or under `data` — the
 * record itself or a one-element array — from servers that predate that decision. The legacy
 * shapes are moved under `result` first, so a failure names the field (`result.id`), not "body".
 */
function singleRecord<T>(record: z.ZodType<T>): z.ZodType<T> {
  return z.preprocess(
    (body) => {
      if (typeof body !== 'object' || body === null || 'result' in body || !('data' in body)) return body;
      const data: unknown = body.data;
      const only: unknown = Array.isArray(data) && data.length === 1 ? data[0] : data;
      return { ...body, result: only };
    },
    z.looseObject({ success: z.literal(true), result: record }).transform((body) => body.result),
  );
}

/** A catalog list (`result.<field>` and `result.total`); a service that leaves `total` out has listed them all. */
function listOf<T>(field: string, record: z.ZodType<T>): z.ZodType<{ total: number; items: T[] }> {
  const shape: Record<string, z.ZodType> = {
    total: z.number().int().nonnegative().optional(),
    [field]: z.array(record),
  };
  return z.looseObject({ success: z.literal(true), result: z.looseObject(shape) }).transform((body) => {
    const result = body.result as Record<string, unknown>;
    const items = result[field] as T[];
    return { total: typeof result['total'] === 'number' ? result['total'] : items.length, items };
  });
}

/**
 * A model from `GET /models`, by its id with or without `:version`, or by `base/slug`: how a
 * service without `GET /models/:id` is asked.
 */
async function findListedModel(
  api: ApiClient,
  id: string,
  opts: RequestOptions | undefined,
): Promise<ModelRecord | null> {
  const wanted = safeDecode(id).toLowerCase();
  const bare = wanted.split(':')[0];
  for (let page = 0; page < 50; page++) {
    const res = await api.listModels({ limit: 100, page }, opts);
    const exact = res.models.find((m) => m.id.toLowerCase() === wanted);
    const loose = res.models.find((m) => m.id.toLowerCase().split(':')[0] === bare || `${m.base}/${m.slug}` === bare);
    if (exact ?? loose) return (exact ?? loose)!;
    if (res.models.length === 0 || (page + 1) * 100 >= res.total) return null;
  }
  return null;
}

/** How a service answers a path it does not serve: 404, or 405 to a method it does not take there. */
function isMissingEndpoint(error: unknown): boolean {
  return error instanceof ServiceError && (error.code === 'not_found_error' || error.status === 405);
}

/** An item of `GET /media` by id (at most ten pages of 100: the recent ones a client asks for). */
async function findListedMedia(
  api: ApiClient,
  id: string,
  opts: RequestOptions | undefined,
): Promise<MediaItem | null> {
  for (let page = 0; page < 10; page++) {
    const res = await api.listMedia({ limit: 100, page }, opts);
    const found = res.medias.find((m) => m.id === id);
    if (found) return found;
    if (res.medias.length === 0 || (page + 1) * 100 >= res.total) return null;
  }
  return null;
}

/** A percent-encoded id (`acme%2Fmotion`) as the raw one. */
function safeDecode(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}
const FINAL = new Set<GenerationStatus>(['succeeded', 'failed', 'canceled']);
const OpenApiDocument = z.record(z.string(), z.unknown());

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
