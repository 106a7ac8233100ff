/**
 * Luma Dream Machine (Ray 2, Ray Flash 2) through the official `lumaai` SDK.
 *
 * - Submit: `POST /generations/video` (`client.generations.create`), answered with the generation
 *   in state `queued`; poll `GET /generations/{id}`: queued → dreaming → completed (`assets.video`)
 *   or failed (`failure_reason`).
 * - Cancel: Luma has no cancel call; deleting the generation (`DELETE /generations/{id}`) is the
 *   only way to drop it, and a later poll then answers 404, which reads as canceled.
 * - Webhooks: `callback_url`; Luma POSTs the generation object, unsigned. Because anyone could post
 *   one, a delivery (with a generation id of Luma's form, a UUID) is only a hint to poll: the runner
 *   asks the authenticated API for the truth, at most once per job per interval.
 * - Start frames: Luma takes keyframe images only as URLs it fetches itself ("upload and use your
 *   own CDN image URLs, currently this is the only way to pass an image", docs.lumalabs.ai/docs/api);
 *   the service is often on loopback, so `startImage` is 'none' and routing skips Luma for
 *   image-to-video.
 */
import type LumaAI from 'lumaai';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderErrorClass,
  ProviderTask,
  SubmittedJob,
  WebhookDelivery,
} from './contract.ts';
import { ProviderError, UUID_JOB_ID } from './contract.ts';
import { classOfStatus, excerpt, redact, retryAfterSeconds, timedOut } from './http.ts';
import { checkedInput } from './input-schemas.ts';
import { loadOnce } from './load-once.ts';

const DEFAULT_BASE_URL = 'https://api.lumalabs.ai/dream-machine/v1';

/** The SDK, imported on first use (docs/providers.md, "SDKs load on first use"). */
const loadSdk = loadOnce(() => import('lumaai'));
type LumaSdk = Awaited<ReturnType<typeof loadSdk>>;

/** The values Luma's video endpoint accepts (SDK types and docs), by v1 meaning. */
export const LUMA_MODELS = ['ray-2', 'ray-flash-2'] as const;
export const LUMA_RESOLUTIONS = ['540p', '720p', '1080p', '4k'] as const;
export const LUMA_DURATIONS: Readonly<Record<number, '5s' | '9s'>> = { 5: '5s', 9: '9s' };
export const LUMA_ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'] as const;

/** Failure reasons Luma documents for its prompt and frame moderation (docs.lumalabs.ai/docs/errors). */
const MODERATION = /moderation|blacklisted|not suitable|safety/i;

function client(sdk: LumaSdk, settings: AdapterSettings): LumaAI {
  return new sdk.LumaAI({
    authToken: settings.apiKey,
    // Explicit, so only the service's setting overrides it (not the SDK's own LUMAAI_BASE_URL).
    baseURL: settings.baseUrl ?? DEFAULT_BASE_URL,
    // The service's runner owns retries (one retry on 5xx, Retry-After on 429, then fallback); the
    // SDK's own two silent retries would multiply those and could submit (and charge) twice.
    maxRetries: 0,
  });
}

function includes<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** Whether the caller's signal fired because a deadline passed (AbortSignal.timeout). */
function refuse(message: string): ProviderError {
  return new ProviderError('luma', 'invalid_input', `Luma: ${message}`);
}

/** The v1 task as Luma's `GenerationCreateParams` (see the report for the full mapping). */
export function lumaRequest(task: ProviderTask, webhookUrl?: string): LumaAI.GenerationCreateParams {
  if (task.kind !== 'video') throw refuse('only makes videos');
  if (!includes(LUMA_MODELS, task.path)) throw refuse(`unknown model ${task.path}`);
  if (task.startImage || task.endImage)
    throw refuse('takes start and end frames only as public URLs, which this service cannot give');
  const resolution = task.size.trim().toLowerCase();
  if (!includes(LUMA_RESOLUTIONS, resolution)) {
    throw refuse(`size ${task.size} is not one of ${LUMA_RESOLUTIONS.join(', ')}`);
  }
  const duration = LUMA_DURATIONS[task.durationSeconds];
  if (!duration) throw refuse(`duration ${task.durationSeconds}s is not one of 5, 9`);
  if (!includes(LUMA_ASPECT_RATIOS, task.aspectRatio)) {
    throw refuse(`aspect ratio ${task.aspectRatio} is not one of ${LUMA_ASPECT_RATIOS.join(', ')}`);
  }
  const loop = task.parameters['loop'];
  if (loop !== undefined && typeof loop !== 'boolean') throw refuse('loop must be true or false');
  // The model's schema has the last word: what Luma would refuse is refused here, unpaid.
  return checkedInput(
    'luma',
    task.path,
    {
      model: task.path,
      prompt: task.prompt,
      resolution,
      duration,
      aspect_ratio: task.aspectRatio,
      ...(loop === undefined ? {} : { loop }),
      ...(webhookUrl ? { callback_url: webhookUrl } : {}),
    },
    task.inputSchema,
  );
}

/** The `detail` of Luma's error body: a string, or FastAPI's list of `{msg}` for validation errors. */
function detailOf(body: unknown): string | undefined {
  const detail = body && typeof body === 'object' ? (body as { detail?: unknown }).detail : undefined;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const msgs = detail.map((d) => (d && typeof d === 'object' ? (d as { msg?: unknown }).msg : undefined));
    const text = msgs.filter((m): m is string => typeof m === 'string').join('; ');
    return text || undefined;
  }
  return undefined;
}

/** Any failure of an SDK call as a ProviderError; the key never reaches the message. */
export function lumaError(sdk: LumaSdk, err: unknown, apiKey: string, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.APIUserAbortError) {
    // A per-request deadline (the caller's AbortSignal.timeout) is a provider too slow to answer,
    // which the runner retries; any other abort is the job being canceled.
    if (timedOut(signal)) return new ProviderError('luma', 'server', 'Luma did not answer in time');
    return new ProviderError('luma', 'canceled', 'Luma: request aborted');
  }
  if (err instanceof sdk.APIConnectionError) {
    const late = err instanceof sdk.APIConnectionTimeoutError;
    return new ProviderError('luma', 'server', `Luma could not be reached${late ? ' (timed out)' : ''}`);
  }
  if (err instanceof sdk.APIError && typeof err.status === 'number') {
    const status = err.status;
    const detail = detailOf(err.error);
    let errorClass: ProviderErrorClass = classOfStatus(status);
    let message: string;
    if (status === 401 || status === 403) {
      // Whatever the body says, it is about the key: never repeat it.
      message = `Luma refused the API key (HTTP ${status})`;
    } else if (status === 402) {
      errorClass = 'auth';
      message = 'Luma refused the request: the account has no credits left (HTTP 402)';
    } else {
      if (errorClass === 'invalid_input' && detail && MODERATION.test(detail)) errorClass = 'content_policy';
      message = `Luma answered HTTP ${status}${detail ? `: ${excerpt(redact(detail, apiKey))}` : ''}`;
    }
    const retryAfter =
      status === 429
        ? retryAfterSeconds((err.headers as Record<string, string | null | undefined> | undefined)?.['retry-after'])
        : undefined;
    return new ProviderError('luma', errorClass, message, {
      status,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
    });
  }
  // lumaai fetches with node-fetch, whose unparsable JSON is a FetchError of type invalid-json.
  if (err instanceof SyntaxError || (err instanceof Error && (err as { type?: unknown }).type === 'invalid-json')) {
    return new ProviderError('luma', 'malformed', 'Luma answered with JSON that does not parse');
  }
  const text = err instanceof Error ? err.message : String(err);
  return new ProviderError('luma', 'server', `Luma call failed: ${excerpt(redact(text, apiKey))}`);
}

function malformed(what: string): ProviderError {
  return new ProviderError('luma', 'malformed', `Luma answered ${what}`);
}

/** A generation object as a job status. */
export function lumaStatus(generation: unknown, apiKey: string): JobStatus {
  if (!generation || typeof generation !== 'object') throw malformed('without a generation object');
  const g = generation as LumaAI.Generation;
  switch (g.state) {
    case 'queued':
      return { status: 'queued' };
    case 'dreaming':
      return { status: 'running' };
    case 'completed': {
      const video = g.assets?.video;
      if (typeof video !== 'string' || !/^https?:\/\//i.test(video)) {
        return { status: 'failed', error: malformed('completed without a video') };
      }
      return { status: 'succeeded', outputs: [{ url: video }] };
    }
    case 'failed': {
      const reason = typeof g.failure_reason === 'string' && g.failure_reason ? g.failure_reason : 'no reason given';
      const errorClass: ProviderErrorClass = MODERATION.test(reason) ? 'content_policy' : 'failed';
      const message = `Luma ${errorClass === 'content_policy' ? 'refused the request' : 'failed the generation'}: ${excerpt(redact(reason, apiKey))}`;
      return { status: 'failed', error: new ProviderError('luma', errorClass, message) };
    }
    default:
      throw malformed(`an unknown generation state ${JSON.stringify(g.state ?? null)}`);
  }
}

export const lumaAdapter: ProviderAdapter = {
  id: 'luma',
  name: 'Luma AI',
  description: 'Luma Dream Machine: Ray 2 and Ray Flash 2 video (text-to-video).',
  envKey: 'LUMAAI_API_KEY',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: true,
  startImage: 'none',

  async testKey(settings, signal) {
    const sdk = await loadSdk();
    try {
      // The credit balance: authenticated, makes nothing, costs nothing.
      const credits: unknown = await client(sdk, settings).credits.get({ signal });
      if (
        !credits ||
        typeof credits !== 'object' ||
        typeof (credits as { credit_balance?: unknown }).credit_balance !== 'number'
      ) {
        throw malformed('the credits call without a balance');
      }
    } catch (err) {
      throw lumaError(sdk, err, settings.apiKey, signal);
    }
  },

  async submit(settings, task) {
    const body = lumaRequest(task, settings.webhookUrl);
    const sdk = await loadSdk();
    let generation: unknown;
    try {
      generation = await client(sdk, settings).generations.create(body, { signal: task.signal });
    } catch (err) {
      throw lumaError(sdk, err, settings.apiKey, task.signal);
    }
    const id = generation && typeof generation === 'object' ? (generation as { id?: unknown }).id : undefined;
    if (typeof id !== 'string' || id === '') throw malformed('a new generation without an id');
    return { id, state: { model: body.model } } satisfies SubmittedJob;
  },

  async poll(settings, job, signal) {
    const sdk = await loadSdk();
    let generation: unknown;
    try {
      generation = await client(sdk, settings).generations.get(job.id, { signal });
    } catch (err) {
      // Deleted at Luma (by cancel, or by its owner in Luma's app): it will never finish.
      if (err instanceof sdk.NotFoundError) return { status: 'canceled' };
      throw lumaError(sdk, err, settings.apiKey, signal);
    }
    return lumaStatus(generation, settings.apiKey);
  },

  async cancel(settings, job, signal) {
    const sdk = await loadSdk();
    try {
      await client(sdk, settings).generations.delete(job.id, { signal });
    } catch (err) {
      if (err instanceof sdk.NotFoundError) return;
      throw lumaError(sdk, err, settings.apiKey, signal);
    }
  },

  webhook(_settings, delivery) {
    return Promise.resolve(lumaDelivery(delivery.body));
  },
};

/**
 * A delivery's body → the job it names (a generation id of Luma's form, a UUID, in a generation
 * object), or undefined when it is not Luma's.
 */
function lumaDelivery(raw: Buffer): WebhookDelivery | undefined {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!body || typeof body !== 'object') return undefined;
  const { id, state } = body as { id?: unknown; state?: unknown };
  if (typeof id !== 'string' || !UUID_JOB_ID.test(id) || typeof state !== 'string') return undefined;
  if (!['queued', 'dreaming', 'completed', 'failed'].includes(state)) return undefined;
  // Luma signs nothing: the delivery is only a hint to poll (docs/security.md), its body never
  // trusted for the outcome.
  return { jobId: id };
}
