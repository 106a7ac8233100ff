import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FalClient, RequestMiddleware } from '@fal-ai/client';
import { ProviderError, UUID_JOB_ID } from './contract.ts';
import { FAL_JWKS_URL, verifyFalWebhook } from './fal-webhooks.ts';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderOutput,
  ProviderTask,
  StartImage,
  SubmittedJob,
} from './contract.ts';
import { endImageField } from './end-image.ts';
import { excerpt, guardedFetch, normalizeError, statusError } from './http.ts';
import type { HttpFailure } from './http.ts';
import { checkedInput } from './input-schemas.ts';
import { loadOnce } from './load-once.ts';
import { mappedInput } from './mapped-input.ts';

/**
 * fal (fal.ai) through `@fal-ai/client`, on its queue API:
 * - submit `POST https://queue.fal.run/{model path}` (`?fal_webhook=URL` for a webhook) →
 *   `{request_id, status_url, response_url, cancel_url}`;
 * - status `GET …/{owner}/{alias}/requests/{id}/status` → IN_QUEUE (queue_position), IN_PROGRESS,
 *   COMPLETED (the SDK drops the model path's sub-path for these: `fal-ai/veo3/fast` → `fal-ai/veo3`);
 * - result `GET …/requests/{id}`: the output, or the job's error with its status (422 with a
 *   `detail` array of typed errors such as `content_policy_violation`, or `{detail, error_type}`);
 * - cancel `PUT …/requests/{id}/cancel` (202, or 400 when already completed).
 * Auth is `Authorization: Key $FAL_KEY`. Start images go through fal storage
 * (`POST https://rest.fal.ai/storage/upload/initiate` → a signed `upload_url` to PUT the bytes to,
 * and the `file_url` the model reads): private to the account, and any size.
 */

const NAME = 'fal';
const DEFAULT_BASE_URL = 'https://queue.fal.run';
/** The app whose queue testKey asks about; any public app works. */
const TEST_KEY_APP = 'fal-ai/flux/schnell';
const NO_SUCH_REQUEST = '00000000-0000-4000-8000-000000000000';

/** The SDK, imported on first use (docs/providers.md, "SDKs load on first use"). */
const loadSdk = loadOnce(() => import('@fal-ai/client'));

interface FalJobState extends Record<string, unknown> {
  path: string;
  kind: ProviderTask['kind'];
}

/**
 * The client for one adapter call. `createFalClient`, never the global `fal` singleton, so that the
 * key and base URL are this call's own. The client has no base-URL option: its documented
 * `requestMiddleware` sees every request it makes (queue.fal.run, fal.run, rest.fal.ai storage)
 * and here moves each onto `settings.baseUrl`, keeping path and query (the hosts' paths do not
 * overlap: `/storage/…` against `/{owner}/{app}/…`). The signed upload URL that storage returns is
 * fetched as given (it is the storage's own, not fal's API).
 */
async function client(settings: AdapterSettings): Promise<FalClient> {
  const { createFalClient } = await loadSdk();
  const base = settings.baseUrl?.replace(/\/+$/, '');
  const requestMiddleware: RequestMiddleware | undefined = base
    ? (request) => {
        const url = new URL(request.url);
        return Promise.resolve({ ...request, url: `${base}${url.pathname}${url.search}` });
      }
    : undefined;
  return createFalClient({
    credentials: settings.apiKey,
    suppressLocalCredentialsWarning: true,
    fetch: guardedFetch({ provider: 'fal', name: NAME, apiKey: settings.apiKey, describe: describeFailure }),
    ...(requestMiddleware ? { requestMiddleware } : {}),
  });
}

/** fal's failed answers: model errors (`detail` array of typed errors) and request errors (`{detail, error_type}`). */
function describeFailure(failure: HttpFailure): ProviderError {
  const { status } = failure;
  const body = (failure.json ?? {}) as { detail?: unknown; error_type?: unknown; message?: unknown };
  const details = Array.isArray(body.detail) ? (body.detail as Array<{ msg?: unknown; type?: unknown }>) : [];
  const reason =
    details.map((d) => (typeof d.msg === 'string' ? d.msg : '')).find(Boolean) ??
    (typeof body.detail === 'string' ? body.detail : typeof body.message === 'string' ? body.message : '');
  const detail = excerpt(reason || failure.text || `HTTP ${status}`);
  if (details.some((d) => d.type === 'content_policy_violation')) {
    return new ProviderError('fal', 'content_policy', `fal refused the request under its content policy: ${detail}`);
  }
  if (body.error_type === 'client_cancelled') {
    return new ProviderError('fal', 'canceled', 'fal: the request was canceled');
  }
  return statusError('fal', NAME, failure, detail);
}

/* ---------------------------------------------------------------------------------------------- */
/* Inputs: the v1 task → each model path's own input schema (fal's model pages).                   */

type InputBuilder = (task: ProviderTask, imageUrl: string | undefined) => Record<string, unknown>;

function prompt(task: ProviderTask): string {
  // No model here has a style field; the style rides in the prompt.
  return task.style ? `${task.prompt} (style: ${task.style})` : task.prompt;
}

function image(imageUrl: string | undefined): Record<string, unknown> {
  return imageUrl ? { image_url: imageUrl } : {};
}

function seed(task: ProviderTask): Record<string, unknown> {
  return task.seed === undefined ? {} : { seed: task.seed };
}

function audio(task: ProviderTask): Record<string, unknown> {
  return task.audio === undefined ? {} : { generate_audio: task.audio };
}

const kling: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: String(task.durationSeconds),
  ...(imageUrl ? image(imageUrl) : { aspect_ratio: task.aspectRatio }),
});

const veo3: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: `${task.durationSeconds}s`,
  resolution: task.size,
  ...(imageUrl ? image(imageUrl) : { aspect_ratio: task.aspectRatio }),
  ...audio(task),
  ...seed(task),
});

/** Wan counts frames, not seconds: 16 fps and one frame more than whole seconds (5 s → 81, its default). */
const wan: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  resolution: task.size,
  frames_per_second: 16,
  num_frames: Math.min(161, Math.max(17, task.durationSeconds * 16 + 1)),
  ...(imageUrl ? image(imageUrl) : { aspect_ratio: task.aspectRatio }),
  ...seed(task),
});

/**
 * Hailuo's text-to-video standard tier is 768P only; image-to-video takes 512P or 768P, and the
 * catalog's 720p goes out as 768P through the schema's documented mapping (input-schemas.ts).
 */
const hailuo: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: String(task.durationSeconds),
  ...(imageUrl ? { ...image(imageUrl), resolution: task.size.toUpperCase() } : {}),
});

const seedance: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: String(task.durationSeconds),
  resolution: task.size,
  ...(imageUrl ? image(imageUrl) : { aspect_ratio: task.aspectRatio }),
  ...seed(task),
});

const ray2: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: `${task.durationSeconds}s`,
  resolution: task.size,
  aspect_ratio: task.aspectRatio,
  ...image(imageUrl),
});

/** FLUX takes any size as `{width, height}` (or one of its presets, which v1 sizes do not need). */
const flux: InputBuilder = (task) => ({
  prompt: prompt(task),
  image_size: { width: task.width, height: task.height },
  num_images: task.count,
  ...seed(task),
});

export const FAL_MODELS: Readonly<Record<string, { output: 'video' | 'images'; input: InputBuilder }>> = {
  'fal-ai/kling-video/v2.1/standard/text-to-video': { output: 'video', input: kling },
  'fal-ai/kling-video/v2.1/standard/image-to-video': { output: 'video', input: kling },
  // fal's model pages list Kling 2.1 text-to-video under the master tier only; same input schema.
  'fal-ai/kling-video/v2.1/master/text-to-video': { output: 'video', input: kling },
  'fal-ai/kling-video/v2.1/master/image-to-video': { output: 'video', input: kling },
  'fal-ai/veo3': { output: 'video', input: veo3 },
  'fal-ai/veo3/fast': { output: 'video', input: veo3 },
  'fal-ai/veo3/image-to-video': { output: 'video', input: veo3 },
  'fal-ai/wan/v2.2-a14b/text-to-video': { output: 'video', input: wan },
  'fal-ai/wan/v2.2-a14b/image-to-video': { output: 'video', input: wan },
  'fal-ai/minimax/hailuo-02/standard/text-to-video': { output: 'video', input: hailuo },
  'fal-ai/minimax/hailuo-02/standard/image-to-video': { output: 'video', input: hailuo },
  'fal-ai/bytedance/seedance/v1/lite/text-to-video': { output: 'video', input: seedance },
  'fal-ai/bytedance/seedance/v1/lite/image-to-video': { output: 'video', input: seedance },
  'fal-ai/luma-dream-machine/ray-2': { output: 'video', input: ray2 },
  'fal-ai/luma-dream-machine/ray-2/image-to-video': { output: 'video', input: ray2 },
  'fal-ai/flux/dev': { output: 'images', input: flux },
  'fal-ai/flux/schnell': { output: 'images', input: flux },
  'fal-ai/flux-pro/v1.1': { output: 'images', input: flux },
};

/**
 * The model's input: its own parameters by name (the catalog names them as fal does), then the
 * fields mapped from the v1 request, which win (they were validated as v1 fields). Hand-kept
 * models have builders above; synced ones carry their inputs' names in the offer.
 */
export function falInput(task: ProviderTask, imageUrl?: string, endImageUrl?: string): Record<string, unknown> {
  // fal names the end frame `end_image_url` on every endpoint that takes one (Hailuo 02, Seedance, Ray 2).
  const end = endImageUrl ? endImageField('fal', task.path, 'end_image_url', endImageUrl, task.inputSchema) : {};
  const model = FAL_MODELS[task.path];
  if (model) return { ...task.parameters, ...model.input(task, imageUrl), ...end };
  // A synced model: its offer names the model's own inputs (docs/providers.md, "Syncing the catalog").
  if (task.inputs) return { ...mappedInput(task, task.inputs, imageUrl), ...end };
  throw new ProviderError('fal', 'invalid_input', `fal has no model path ${task.path} in this adapter`);
}

/* ---------------------------------------------------------------------------------------------- */
/* Results.                                                                                        */

interface FalFile {
  url?: unknown;
}

/** The job's result → outputs; a success without any, or with flagged images, is not a success. */
function outputsOf(kind: ProviderTask['kind'], data: unknown): JobStatus {
  const body = (data ?? {}) as { video?: FalFile; images?: FalFile[]; has_nsfw_concepts?: unknown };
  if (
    kind === 'image' &&
    Array.isArray(body.has_nsfw_concepts) &&
    body.has_nsfw_concepts.some((flag) => flag === true)
  ) {
    const error = new ProviderError(
      'fal',
      'content_policy',
      'fal flagged the image as not safe for work (has_nsfw_concepts)',
    );
    return { status: 'failed', error };
  }
  const files: FalFile[] =
    kind === 'video' ? (body.video ? [body.video] : []) : Array.isArray(body.images) ? body.images : [];
  const outputs: ProviderOutput[] = files
    .map((file) => file.url)
    .filter((url): url is string => typeof url === 'string' && /^https?:\/\//.test(url))
    .map((url) => ({ url }));
  if (outputs.length === 0) {
    return {
      status: 'failed',
      error: new ProviderError('fal', 'malformed', 'fal reported success without any output'),
    };
  }
  return { status: 'succeeded', outputs };
}

function state(job: SubmittedJob): FalJobState {
  const { path, kind } = job.state as Partial<FalJobState>;
  if (typeof path !== 'string' || (kind !== 'video' && kind !== 'image')) {
    throw new ProviderError('fal', 'malformed', 'fal job state is missing its model path');
  }
  return { path, kind };
}

async function upload(fal: FalClient, start: StartImage | undefined): Promise<string | undefined> {
  if (!start) return undefined;
  const bytes = await readFile(start.path);
  const file = new File([bytes], basename(start.path), { type: start.mime });
  // Kept a day at most: long enough for the job to start, not a library of the user's frames.
  return fal.storage.upload(file, { lifecycle: { expiresIn: '1d' } });
}

export const falAdapter: ProviderAdapter = {
  id: 'fal',
  name: 'fal',
  description: 'fal.ai: Kling, Veo 3, Wan, Hailuo, Seedance, Luma Ray 2 and FLUX on one queue API.',
  envKey: 'FAL_KEY',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: true,
  startImage: 'upload',

  /** A status query for a request that does not exist: 404 means the key was accepted; nothing runs. */
  async testKey(settings, signal) {
    try {
      const fal = await client(settings);
      await fal.queue.status(TEST_KEY_APP, { requestId: NO_SUCH_REQUEST, abortSignal: signal });
    } catch (err) {
      const error = normalizeError('fal', NAME, settings.apiKey, err, signal);
      if (error.status === 404) return;
      throw error;
    }
  },

  async submit(settings, task) {
    try {
      const fal = await client(settings);
      const imageUrl = await upload(fal, task.startImage);
      const endImageUrl = await upload(fal, task.endImage);
      // Checked against the model's schema: what fal would refuse is refused here, unpaid.
      const input = checkedInput('fal', task.path, falInput(task, imageUrl, endImageUrl), task.inputSchema);
      const queued = await fal.queue.submit(task.path, {
        input,
        abortSignal: task.signal,
        ...(settings.webhookUrl ? { webhookUrl: settings.webhookUrl } : {}),
      });
      if (typeof queued?.request_id !== 'string' || !queued.request_id) {
        throw new ProviderError('fal', 'malformed', 'fal accepted the job without a request id');
      }
      const jobState: FalJobState = { path: task.path, kind: task.kind };
      return { id: queued.request_id, state: jobState };
    } catch (err) {
      const error = normalizeError('fal', NAME, settings.apiKey, err, task.signal);
      // A 404 on submit is an endpoint fal does not have (a catalog path gone stale), not the
      // creator's input: another provider of the model may still serve it.
      if (error.status === 404) {
        throw new ProviderError('fal', 'failed', `fal has no endpoint ${task.path} (HTTP 404)`, { status: 404 });
      }
      throw error;
    }
  },

  async poll(settings, job, signal) {
    try {
      const { path, kind } = state(job);
      const fal = await client(settings);
      const status = await fal.queue.status(path, { requestId: job.id, abortSignal: signal });
      if (status?.status === 'IN_QUEUE') {
        return typeof status.queue_position === 'number'
          ? { status: 'queued', position: status.queue_position }
          : { status: 'queued' };
      }
      if (status?.status === 'IN_PROGRESS') return { status: 'running' };
      if (status?.status !== 'COMPLETED') {
        throw new ProviderError('fal', 'malformed', 'fal answered a status it does not document');
      }
      return await result(settings, path, kind, job.id, signal);
    } catch (err) {
      throw normalizeError('fal', NAME, settings.apiKey, err, signal);
    }
  },

  async cancel(settings, job, signal) {
    try {
      const { path } = state(job);
      const fal = await client(settings);
      await fal.queue.cancel(path, { requestId: job.id, abortSignal: signal });
    } catch (err) {
      const error = normalizeError('fal', NAME, settings.apiKey, err, signal);
      // 400: already completed; 404: gone. Either way there is nothing left to cancel.
      if (error.status === 400 || error.status === 404) return;
      throw error;
    }
  },

  /**
   * fal posts `{request_id, status: 'OK' | 'ERROR', payload, error}` to the `fal_webhook` URL,
   * signed with ED25519 keys it publishes as a JWKS (fal-webhooks.ts). Only a delivery whose
   * signature verifies is taken, and only as the news that the job ended: the runner's poll (with
   * our key, against fal) reads the outcome, as the payload's reading needs the job's kind.
   */
  async webhook(settings, delivery) {
    let body: unknown;
    try {
      body = JSON.parse(delivery.body.toString('utf8'));
    } catch {
      return undefined;
    }
    const id = (body as { request_id?: unknown } | null)?.request_id;
    const status = (body as { status?: unknown }).status;
    if (typeof id !== 'string' || !UUID_JOB_ID.test(id) || (status !== 'OK' && status !== 'ERROR')) return undefined;
    const signed = await verifyFalWebhook(delivery.headers, delivery.body, settings.jwksUrl ?? FAL_JWKS_URL);
    return signed ? { jobId: id } : undefined;
  },
};

/** The result of a completed job: its outputs, or how it failed. */
async function result(
  settings: AdapterSettings,
  path: string,
  kind: ProviderTask['kind'],
  requestId: string,
  signal: AbortSignal,
): Promise<JobStatus> {
  try {
    const fal = await client(settings);
    const answer: { data: unknown } = await fal.queue.result(path, { requestId, abortSignal: signal });
    return outputsOf(kind, answer.data);
  } catch (err) {
    const error = normalizeError('fal', NAME, settings.apiKey, err, signal);
    // The key, the rate limit and fal's reachability are about this call, not the job.
    if (error.errorClass === 'auth' || error.errorClass === 'rate_limited' || signal.aborted) throw error;
    if (error.errorClass === 'server' && error.status === undefined) throw error;
    if (error.errorClass === 'canceled') return { status: 'canceled' };
    if (error.errorClass === 'server') {
      return {
        status: 'failed',
        error: new ProviderError('fal', 'failed', error.message, { status: error.status ?? 500 }),
      };
    }
    return { status: 'failed', error };
  }
}
