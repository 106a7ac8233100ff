import type { Dispatcher } from 'undici';
import type { Readable } from 'node:stream';
import type { Clock } from '../../../shared/clock.ts';
import type {
  Generation,
  GenerationResponse,
  GenerationStatus,
  ImageGenerationRequest,
  MediaItem,
  MediaListQueryInput,
  ModelRecord,
  ProviderRecord,
  RetainRequest,
  RoutingPreview,
  UploadRequest,
  UploadTicket,
  Usage,
  VideoGenerationRequest,
} from '../../../shared/api/index.ts';
import type { VideoVariationRequest } from '../../../shared/api/index.ts';
import type { GenerationStart, PollPolicy } from './generations.ts';
import type { RateLimitState } from './rate-limit.ts';
import type { RetryBudget, RetryPolicy, Sleep, WaitNotice } from './retry.ts';

/** The API client's public interface: its options, calls and answers (client.ts makes one). */
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
   * Told before every wait the client makes: on the service's word (a 429's Retry-After, a spent
   * rate window) or before trying a failed request again, so no caller waits in silence.
   */
  onWait?: (notice: WaitNotice) => void;
  /**
   * What the call's retry waits draw from: a caller that tries again itself (the job queue) passes
   * its own, so the waits of both layers stay within one total. Without it, one per call
   * (`retry.maxTotalWaitMs`).
   */
  retryBudget?: RetryBudget;
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
  /**
   * False for a request the service does not count against the rate limits (an item's download,
   * docs/api.md): never held back by a spent window. Default true.
   */
  rateCounted?: boolean;
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
  generateVideo(input: VideoGenerationRequest, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  generateImage(input: ImageGenerationRequest, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  /** `POST /videos/variations` (docs/workflows.md), followed like generateVideo. */
  createVariations(input: VideoVariationRequest, options: FollowedGenerationOptions): Promise<GenerationResponse>;
  /** Submits with `Prefer: respond-async` and returns at once: accepted (202) or already done (200). */
  submitGeneration(
    operation: GenerationOperation,
    input: VideoGenerationRequest | ImageGenerationRequest | VideoVariationRequest,
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
  previewRouting(
    input: VideoGenerationRequest | ImageGenerationRequest,
    options?: RequestOptions,
  ): Promise<RoutingPreview>;
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
