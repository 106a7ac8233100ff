/**
 * The contract between the service and a remote AI provider (docs/providers.md). Each provider is one
 * adapter module next to this file (`fal.ts`, `replicate.ts`, …) built on the vendor's official
 * SDK; everything that is the same for every provider (persisting the provider's job id, polling
 * with backoff and jitter, webhooks, timeouts, downloading and sniffing the output, health,
 * fallback) lives in the service's runner, not in the adapters. Adding a provider is then one
 * adapter module plus catalog entries.
 *
 * Adapters never log, never persist and never put a key into an error message: keys travel only
 * inside `AdapterSettings`.
 */

import type { TokenUsage } from '../../../shared/api/index.ts';
import type { OfferInputs } from './inputs.ts';

export const REMOTE_PROVIDER_IDS = ['fal', 'replicate', 'google', 'runway', 'luma', 'openai'] as const;
export type RemoteProviderId = (typeof REMOTE_PROVIDER_IDS)[number];

/** How a provider is reached; built by the service from its key store and settings. */
export interface AdapterSettings {
  /** The provider's secret, already validated (no whitespace). */
  apiKey: string;
  /**
   * Overrides the SDK's API base (`CLIPDESK_<ID>_BASE_URL`, or the app's advanced setting): for
   * proxies, regional endpoints and the contract fakes in tests. Passed to the SDK through its own
   * base-URL option (fal has none: its documented `requestMiddleware` rewrites the host).
   */
  baseUrl?: string;
  /**
   * Where the provider should deliver a webhook for this job, when the service has a public URL
   * (`--public-url`); undefined means poll. Only used by adapters whose provider has webhooks.
   */
  webhookUrl?: string;
  /**
   * Where the provider publishes the keys its webhooks are signed with (fal's JWKS), when not the
   * documented address (`CLIPDESK_<ID>_JWKS_URL`: contract fakes in tests, proxies).
   */
  jwksUrl?: string;
}

/** A start frame, already fetched and validated by the service (a local file). */
export interface StartImage {
  path: string;
  mime: string;
  bytes: number;
}

/** One generation asked of a provider; routing has already checked the offer supports it. */
export interface ProviderTask {
  kind: 'video' | 'image';
  /** The provider's own model path from the catalog offer, for this task (t2v and i2v may differ). */
  path: string;
  /** The v1 model id, `base/model:version`. */
  modelId: string;
  prompt: string;
  /** v1 size: a label (`720p`) for video, `WxH` for images; width/height are its pixels. */
  size: string;
  width: number;
  height: number;
  /** `16:9`, `9:16`, `1:1`, … derived from width/height or the request's aspect_ratio. */
  aspectRatio: string;
  /** Seconds of video (0 for images); one of the offer's durations. */
  durationSeconds: number;
  /** Images per request (1 for video). */
  count: number;
  seed?: number;
  style?: string;
  /** Ask for a soundtrack (feature `audio`). */
  audio?: boolean;
  /** Absent when the request has none, or routing dropped it. */
  startImage?: StartImage;
  /**
   * The end frame (the model's image parameter `end_image_url`), a checked local file like the
   * start image: only with a start image, and only for an offer that lists the parameter. The
   * adapter uploads or inlines it as it does the start image, under its model's own field.
   */
  endImage?: StartImage;
  /** The model's own parameters from the request, validated against the model record, by v1 name. */
  parameters: Record<string, unknown>;
  /** Synced models: how the model names the interface's fields in its input (inputs.ts). */
  inputs?: OfferInputs;
  /**
   * Synced models: the input schema their provider lists (input-schemas.ts); a built-in model's
   * ships in the repo and is found by its path.
   */
  inputSchema?: { schema: object; mappings?: Record<string, Record<string, unknown>> };
  signal: AbortSignal;
}

/** A file the provider produced. */
export type ProviderOutput =
  /** To download (with Range resume). `headers` for providers whose file URLs need the key (Google). */
  | { url: string; headers?: Record<string, string> }
  /** Returned inline (OpenAI images as b64_json). */
  | { data: Buffer; mime: string };

export type JobStatus =
  | { status: 'queued'; position?: number; retryAfterSeconds?: number }
  | { status: 'running'; progress?: number; retryAfterSeconds?: number }
  | {
      status: 'succeeded';
      outputs: ProviderOutput[];
      /** USD, when the provider's API reports what it charged. */
      cost?: number;
      /** Tokens by kind, when the provider bills tokens (OpenAI): the offer's token lines price them. */
      usage?: TokenUsage;
    }
  | { status: 'failed'; error: ProviderError }
  | { status: 'canceled' };

/** What the service persists before it waits, so that it can resume after a restart. */
export interface SubmittedJob {
  /** The provider's own job id. */
  id: string;
  /** Whatever else poll/cancel/fetch need (URLs the provider returned, the path); JSON only. */
  state: Record<string, unknown>;
  /** Set by providers that answer synchronously (OpenAI images): no polling. */
  done?: Extract<JobStatus, { status: 'succeeded' }>;
}

/**
 * The classes of provider failure the service acts on (docs/providers.md, "How provider jobs run"):
 * - auth: the key was refused → mark unhealthy, fall back;
 * - rate_limited: 429 → wait per `retryAfterSeconds` or fall back;
 * - server: 5xx or network → one retry, then fall back;
 * - timeout: the job took longer than allowed → cancel at the provider, fall back;
 * - content_policy: the provider refused the prompt or image → 422 with `message`, no fallback;
 * - invalid_input: the provider refused the request's input → 400, no fallback;
 * - malformed: an answer that does not parse or a success without output → fall back;
 * - failed: the job failed at the provider (Replicate's `aborted` too) → fall back;
 * - expired: the job's output was gone when it was fetched (deleted, or its URL's signature lapsed) → fall back;
 * - canceled: canceled at the provider.
 */
export type ProviderErrorClass =
  | 'auth'
  | 'rate_limited'
  | 'server'
  | 'timeout'
  | 'content_policy'
  | 'invalid_input'
  | 'malformed'
  | 'failed'
  | 'expired'
  | 'canceled';

export class ProviderError extends Error {
  readonly provider: RemoteProviderId;
  readonly errorClass: ProviderErrorClass;
  /** The provider's HTTP status, when there was one. */
  readonly status?: number;
  /** From the provider's `Retry-After`, in seconds. */
  readonly retryAfterSeconds?: number;
  /**
   * The provider had accepted the job, and it was recorded, before this failure (polling or
   * downloading failed): asking again would submit, and pay for, a second job, so such a failure
   * falls back instead (server/generation/render.ts). Set where the job is recorded (remote-job.ts).
   */
  afterSubmit = false;
  /** `message` names the provider and never contains a key. */
  constructor(
    provider: RemoteProviderId,
    errorClass: ProviderErrorClass,
    message: string,
    options?: { status?: number; retryAfterSeconds?: number; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.provider = provider;
    this.errorClass = errorClass;
    if (options?.status !== undefined) this.status = options.status;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/** One remote provider. Every method throws `ProviderError` (normalised), never a raw SDK error. */
export interface ProviderAdapter {
  id: RemoteProviderId;
  name: string;
  description: string;
  /** The environment variable its SDK reads by convention (`FAL_KEY`, …). */
  envKey: string;
  /** The SDK's default API base, shown in settings. */
  defaultBaseUrl: string;
  /** Whether the provider can deliver a webhook instead of being polled. */
  webhooks: boolean;
  /**
   * How a start frame reaches the provider privately (the service is often on loopback, so the
   * provider cannot fetch from it): through its file-upload API, inline as a data URI, or not at
   * all (routing then skips it for image-to-video).
   */
  startImage: 'upload' | 'data_uri' | 'none';
  /** One cheap authenticated call that makes nothing (no charge); throws ProviderError('auth') on a refused key. */
  testKey(settings: AdapterSettings, signal: AbortSignal): Promise<void>;
  /** Starts the job. Must not wait for it to finish (except synchronous APIs, via `done`). */
  submit(settings: AdapterSettings, task: ProviderTask): Promise<SubmittedJob>;
  poll(settings: AdapterSettings, job: SubmittedJob, signal: AbortSignal): Promise<JobStatus>;
  /** Best effort; resolves when the provider accepted the cancel or the job was already over. */
  cancel(settings: AdapterSettings, job: SubmittedJob, signal: AbortSignal): Promise<void>;
  /**
   * A webhook delivery (raw body and lower-cased headers) → the job it is about and, only when the
   * delivery's signature was verified and the body carries it, its status; undefined when the
   * delivery is not one of this provider's: a job id not of the provider's format and length, a
   * body not of its shape, or a signature that fails, where the provider signs them. Without a
   * status the delivery is a hint: the runner polls (at most once per job per interval).
   */
  webhook?(
    settings: AdapterSettings,
    delivery: { headers: Record<string, string>; body: Buffer },
  ): Promise<WebhookDelivery | undefined>;
}

/** A job id that is a UUID (fal's request ids, Luma's generation ids): anything else is not theirs. */
export const UUID_JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What an adapter read from a webhook delivery. */
export interface WebhookDelivery {
  jobId: string;
  /** Only from a delivery whose signature was verified. */
  status?: JobStatus;
}

/** What the service knows of a provider's health (GET /providers `status`). */
export interface ProviderHealth {
  status: 'ok' | 'unhealthy';
  /** The class of the last error, and when the provider turned unhealthy (ISO 8601). */
  lastError?: { class: ProviderErrorClass; message: string; at: string };
  since?: string;
  /** Routing skips the provider until then (ISO 8601) after repeated failures. */
  cooldownUntil?: string;
}
