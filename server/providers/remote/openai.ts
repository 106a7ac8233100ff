/**
 * OpenAI images (`gpt-image-1`) through the official `openai` SDK. Images only: OpenAI's Sora video
 * API was shut down on 2026-09-24.
 *
 * - `POST /images/generations` answers synchronously with `data[].b64_json`, so `submit` returns
 *   the job already `done` with the images inline; there is nothing to poll or cancel (aborting
 *   the task's signal aborts the request itself).
 * - Cost: the answer's `usage` counts tokens by kind (text and image input, image and text output),
 *   which OpenAI bills at published per-token rates; the adapter reports them as `usage` and the
 *   offer's token lines price them (shared/api/pricing.ts, tokenCharge), so the charge follows
 *   quality and size exactly. Without `usage` the catalog price applies.
 * - Content policy: HTTP 400 with `code: 'moderation_blocked'` (GPT image models) or
 *   `'content_policy_violation'` (DALL·E), with the reason in `message`.
 * - Start frames: image editing (`images.edit`) is out of scope, so `startImage` is 'none'.
 */
import type OpenAI from 'openai';
import type { TokenUsage } from '../../../shared/api/index.ts';
import type { AdapterSettings, ProviderAdapter, ProviderErrorClass, ProviderOutput, ProviderTask } from './contract.ts';
import { ProviderError } from './contract.ts';
import { classOfStatus, excerpt, redact, retryAfterSeconds, timedOut } from './http.ts';
import { loadOnce } from './load-once.ts';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The SDK, imported on first use (docs/providers.md, "SDKs load on first use"). */
const loadSdk = loadOnce(() => import('openai'));
type OpenAISdk = Awaited<ReturnType<typeof loadSdk>>;

/** The values `gpt-image-1` accepts (SDK types and OpenAI's image API reference). */
export const OPENAI_IMAGE_SIZES = ['1024x1024', '1536x1024', '1024x1536', 'auto'] as const;
export const OPENAI_QUALITIES = ['low', 'medium', 'high', 'auto'] as const;
export const OPENAI_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export const OPENAI_BACKGROUNDS = ['transparent', 'opaque', 'auto'] as const;
export const OPENAI_MODERATION = ['low', 'auto'] as const;
/**
 * OpenAI's own default quality is 'auto' (mostly high, the dearest); the catalog's per-image price
 * is the medium one, so medium is asked unless the request names another.
 */
export const OPENAI_DEFAULT_QUALITY = 'medium';

const MIME = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;

function client(sdk: OpenAISdk, settings: AdapterSettings): OpenAI {
  return new sdk.OpenAI({
    apiKey: settings.apiKey,
    // Explicit, so only the service's setting overrides it (not the SDK's own OPENAI_BASE_URL).
    baseURL: settings.baseUrl ?? DEFAULT_BASE_URL,
    // The service's runner owns retries (one retry on 5xx, Retry-After on 429, then fallback); the
    // SDK's own two silent retries would multiply those, and a retried generation is charged twice.
    maxRetries: 0,
  });
}

function includes<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

/** Whether the caller's signal fired because a deadline passed (AbortSignal.timeout). */
function refuse(message: string): ProviderError {
  return new ProviderError('openai', 'invalid_input', `OpenAI: ${message}`);
}

/** A model parameter by its v1 name (the same as OpenAI's), checked against the allowed values. */
function option<T extends string>(task: ProviderTask, name: string, values: readonly T[]): T | undefined {
  const value = task.parameters[name];
  if (value === undefined) return undefined;
  if (!includes(values, value)) throw refuse(`${name} must be one of ${values.join(', ')}`);
  return value;
}

/** The v1 task as OpenAI's `ImageGenerateParams` (see the report for the full mapping). */
export function openaiRequest(task: ProviderTask): OpenAI.ImageGenerateParamsNonStreaming {
  if (task.kind !== 'image') throw refuse('offers images only');
  if (task.startImage) throw refuse('start images are not supported');
  const size = task.size.trim().toLowerCase();
  if (!includes(OPENAI_IMAGE_SIZES, size))
    throw refuse(`size ${task.size} is not one of ${OPENAI_IMAGE_SIZES.join(', ')}`);
  if (!Number.isInteger(task.count) || task.count < 1 || task.count > 10) throw refuse('n must be between 1 and 10');
  const compression = task.parameters['output_compression'];
  if (
    compression !== undefined &&
    (!Number.isInteger(compression) || (compression as number) < 0 || (compression as number) > 100)
  ) {
    throw refuse('output_compression must be an integer from 0 to 100');
  }
  const outputFormat = option(task, 'output_format', OPENAI_OUTPUT_FORMATS);
  const background = option(task, 'background', OPENAI_BACKGROUNDS);
  const moderation = option(task, 'moderation', OPENAI_MODERATION);
  return {
    model: task.path,
    prompt: task.prompt,
    n: task.count,
    size,
    quality: option(task, 'quality', OPENAI_QUALITIES) ?? OPENAI_DEFAULT_QUALITY,
    output_format: outputFormat ?? 'png',
    ...(background ? { background } : {}),
    ...(moderation ? { moderation } : {}),
    ...(compression === undefined ? {} : { output_compression: compression as number }),
  };
}

/**
 * The answer's tokens by kind, or undefined when it has no usage. Input splits by
 * `input_tokens_details` (what it does not name is text), output by `output_tokens_details` (what
 * it does not name is image: gpt-image-1 outputs image tokens).
 */
export function openaiUsage(usage: unknown): TokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as OpenAI.ImagesResponse.Usage;
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return undefined;
  const count = (n: unknown): number => (typeof n === 'number' && n > 0 ? n : 0);
  const imageIn = count(u.input_tokens_details?.image_tokens);
  const textIn = u.input_tokens_details?.text_tokens;
  const textOut = count(u.output_tokens_details?.text_tokens);
  const imageOut = u.output_tokens_details?.image_tokens;
  return {
    input_text: typeof textIn === 'number' ? count(textIn) : Math.max(0, u.input_tokens - imageIn),
    input_image: imageIn,
    output_image: typeof imageOut === 'number' ? count(imageOut) : Math.max(0, u.output_tokens - textOut),
    output_text: textOut,
  };
}

/** Any failure of an SDK call as a ProviderError; the key never reaches the message. */
export function openaiError(sdk: OpenAISdk, err: unknown, apiKey: string, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.APIUserAbortError) {
    // A per-request deadline (the caller's AbortSignal.timeout) is a provider too slow to answer,
    // which the runner retries; any other abort is the job being canceled.
    if (timedOut(signal)) return new ProviderError('openai', 'server', 'OpenAI did not answer in time');
    return new ProviderError('openai', 'canceled', 'OpenAI: request aborted');
  }
  if (err instanceof sdk.APIConnectionError) {
    const late = err instanceof sdk.APIConnectionTimeoutError;
    return new ProviderError('openai', 'server', `OpenAI could not be reached${late ? ' (timed out)' : ''}`);
  }
  if (err instanceof sdk.APIError && typeof err.status === 'number') {
    const status = err.status;
    const body = err.error && typeof err.error === 'object' ? (err.error as { message?: unknown }) : undefined;
    const reason =
      typeof body?.message === 'string' && body.message ? excerpt(redact(body.message, apiKey)) : undefined;
    let errorClass: ProviderErrorClass = classOfStatus(status);
    let message: string;
    if (err.code === 'moderation_blocked' || err.code === 'content_policy_violation') {
      errorClass = 'content_policy';
      message = `OpenAI refused the request: ${reason ?? 'rejected by its safety system'}`;
    } else if (status === 401) {
      // OpenAI's 401 message repeats the key (masked); the key is never repeated here.
      message = 'OpenAI refused the API key (HTTP 401)';
    } else if (err.code === 'insufficient_quota') {
      // A 429 that waiting does not cure: the account is out of credit.
      errorClass = 'auth';
      message = 'OpenAI refused the request: the account has no quota left (HTTP 429)';
    } else {
      message = `OpenAI answered HTTP ${status}${reason ? `: ${reason}` : ''}`;
    }
    const retryAfter =
      errorClass === 'rate_limited'
        ? retryAfterSeconds((err.headers as Headers | undefined)?.get('retry-after'))
        : undefined;
    return new ProviderError('openai', errorClass, message, {
      status,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
    });
  }
  if (err instanceof SyntaxError) {
    return new ProviderError('openai', 'malformed', 'OpenAI answered with JSON that does not parse');
  }
  const text = err instanceof Error ? err.message : String(err);
  return new ProviderError('openai', 'server', `OpenAI call failed: ${excerpt(redact(text, apiKey))}`);
}

function malformed(what: string): ProviderError {
  return new ProviderError('openai', 'malformed', `OpenAI answered ${what}`);
}

/** The images of an `ImagesResponse`, inline. */
export function openaiOutputs(answer: unknown, requestedFormat: keyof typeof MIME): ProviderOutput[] {
  if (!answer || typeof answer !== 'object') throw malformed('without an images object');
  const { data, output_format: format } = answer as OpenAI.ImagesResponse;
  if (!Array.isArray(data) || data.length === 0) throw malformed('without any image');
  const mime = MIME[includes(OPENAI_OUTPUT_FORMATS, format) ? format : requestedFormat];
  return data.map((image) => {
    const b64 = image && typeof image === 'object' ? image.b64_json : undefined;
    if (typeof b64 !== 'string' || b64 === '') throw malformed('an image without b64_json');
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length === 0) throw malformed('an empty image');
    return { data: bytes, mime };
  });
}

export const openaiAdapter: ProviderAdapter = {
  id: 'openai',
  name: 'OpenAI',
  description: 'OpenAI GPT Image (gpt-image-1): text-to-image.',
  envKey: 'OPENAI_API_KEY',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: false,
  startImage: 'none',

  async testKey(settings, signal) {
    const sdk = await loadSdk();
    try {
      // Reading the model's record: authenticated, makes nothing, costs nothing, and a 404 says
      // the key works but cannot use the model (GPT image needs a verified organization).
      await client(sdk, settings).models.retrieve('gpt-image-1', { signal });
    } catch (err) {
      if (err instanceof sdk.NotFoundError) {
        throw new ProviderError('openai', 'auth', 'OpenAI accepted the key, but it has no access to gpt-image-1', {
          status: 404,
        });
      }
      throw openaiError(sdk, err, settings.apiKey, signal);
    }
  },

  async submit(settings, task) {
    const body = openaiRequest(task);
    const sdk = await loadSdk();
    let answer: unknown;
    let requestId: string | null;
    try {
      const result = await client(sdk, settings).images.generate(body, { signal: task.signal }).withResponse();
      answer = result.data;
      requestId = result.request_id;
    } catch (err) {
      throw openaiError(sdk, err, settings.apiKey, task.signal);
    }
    const outputs = openaiOutputs(answer, body.output_format ?? 'png');
    const usage = openaiUsage((answer as OpenAI.ImagesResponse).usage);
    return {
      // No job exists at OpenAI; its request id names the call for support and logs.
      id: requestId ?? `openai-${crypto.randomUUID()}`,
      state: { model: body.model ?? task.path },
      done: { status: 'succeeded', outputs, ...(usage === undefined ? {} : { usage }) },
    };
  },

  poll() {
    // Only reachable for a job persisted without its answer (a restart mid-call): nothing to resume.
    return Promise.resolve({
      status: 'failed',
      error: new ProviderError('openai', 'failed', 'OpenAI image requests are synchronous: there is no job to resume'),
    });
  },

  cancel() {
    // Synchronous: aborting the task's signal already aborted the request.
    return Promise.resolve();
  },
};
