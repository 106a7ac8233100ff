import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type Replicate from 'replicate';
import type { Prediction } from 'replicate';
import { ProviderError } from './contract.ts';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderOutput,
  ProviderTask,
  StartImage,
  WebhookDelivery,
} from './contract.ts';
import { excerpt, guardedFetch, normalizeError, statusError } from './http.ts';
import type { HttpFailure } from './http.ts';
import { checkedInput } from './input-schemas.ts';
import { loadOnce } from './load-once.ts';
import { mappedInput } from './mapped-input.ts';
import { endImageField } from './end-image.ts';
import { startImageField } from './replicate-versions.ts';

/**
 * Replicate through `replicate` (`new Replicate({auth, baseUrl})`), on its predictions API:
 * - submit `POST /v1/models/{owner}/{name}/predictions` `{input, webhook?, webhook_events_filter?}`
 *   without `Prefer: wait` (so it answers at once, 201, status `starting`);
 * - poll `GET /v1/predictions/{id}`: starting → processing → succeeded | failed | canceled;
 * - cancel `POST /v1/predictions/{id}/cancel`;
 * - errors are problem details (`{title, detail, status}`), 429 with `Retry-After`.
 * Auth is `Authorization: Bearer $REPLICATE_API_TOKEN`. Outputs are deleted by Replicate an hour
 * after the prediction ends (the runner downloads as soon as it sees success).
 *
 * Start images go through the files API (`POST /v1/files`, multipart) and the model gets the
 * file's URL: Replicate recommends data URIs only below 1 MB, and a start frame (a 1080p PNG) is
 * often bigger; an uploaded file is private to the account and expires on its own.
 */

const NAME = 'Replicate';
const DEFAULT_BASE_URL = 'https://api.replicate.com/v1';
/** Standard Webhooks tolerance for the delivery's timestamp, against replays. */
const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;
/** Replicate's prediction ids: lower-case letters and digits (26 of them today). */
const PREDICTION_ID = /^[a-z0-9]{16,64}$/;
/** One delivery per prediction, when it is over (not on start, logs or partial output). */
const ON_COMPLETION: Array<'completed'> = ['completed'];

/** The SDK, imported on first use (docs/providers.md, "SDKs load on first use"). */
const loadSdk = loadOnce(() => import('replicate'));

function baseUrlOf(settings: AdapterSettings): string {
  return settings.baseUrl?.replace(/\/+$/, '') || DEFAULT_BASE_URL;
}

async function client(settings: AdapterSettings): Promise<Replicate> {
  const sdk = await loadSdk();
  return new sdk.default({
    auth: settings.apiKey,
    baseUrl: baseUrlOf(settings),
    fetch: guardedFetch({ provider: 'replicate', name: NAME, apiKey: settings.apiKey, describe: describeFailure }),
  });
}

/** Replicate's failed answers are problem details: `{title, detail, status}` (422s add `invalid_fields`). */
function describeFailure(failure: HttpFailure): ProviderError {
  const { status } = failure;
  const body = (failure.json ?? {}) as { title?: unknown; detail?: unknown };
  const reason = excerpt(
    typeof body.detail === 'string' && body.detail
      ? body.detail
      : typeof body.title === 'string' && body.title
        ? body.title
        : failure.text || `HTTP ${status}`,
  );
  if (contentPolicy(reason)) {
    return new ProviderError(
      'replicate',
      'content_policy',
      `Replicate refused the request under its content policy: ${reason}`,
    );
  }
  return statusError('replicate', NAME, failure, reason);
}

/** Replicate's sign of a content-policy refusal: error code E005 ("flagged as sensitive"), or NSFW filters. */
function contentPolicy(text: string): boolean {
  return /\bE005\b|flagged as sensitive|\bnsfw\b|content (policy|moderation)|safety (filter|checker|system)/i.test(
    text,
  );
}

/* ---------------------------------------------------------------------------------------------- */
/* Inputs: the v1 task → each model's own input schema (the model's API page on replicate.com).     */

type InputBuilder = (task: ProviderTask, imageUrl: string | undefined, imageField?: string) => Record<string, unknown>;

function prompt(task: ProviderTask): string {
  // No model here has a style field; the style rides in the prompt.
  return task.style ? `${task.prompt} (style: ${task.style})` : task.prompt;
}

function seed(task: ProviderTask): Record<string, unknown> {
  return task.seed === undefined ? {} : { seed: task.seed };
}

function named(field: string, imageUrl: string | undefined): Record<string, unknown> {
  return imageUrl ? { [field]: imageUrl } : {};
}

/** Kling v2.1 here is image-to-video only (start_image is required); `mode` picks 720p or 1080p. */
const kling: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: task.durationSeconds,
  mode: task.size === '1080p' ? 'pro' : 'standard',
  ...named('start_image', imageUrl),
});

const veo3: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: task.durationSeconds,
  resolution: task.size,
  aspect_ratio: task.aspectRatio,
  ...(task.audio === undefined ? {} : { generate_audio: task.audio }),
  ...named('image', imageUrl),
  ...seed(task),
});

/** Wan counts frames (81–121) at 16 fps by default: 5 s → 81 frames. */
const wan: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  resolution: task.size,
  frames_per_second: 16,
  num_frames: Math.min(121, Math.max(81, task.durationSeconds * 16 + 1)),
  ...(imageUrl ? { image: imageUrl } : { aspect_ratio: task.aspectRatio }),
  ...seed(task),
});

const hailuo: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: task.durationSeconds,
  resolution: task.size,
  ...named('first_frame_image', imageUrl),
});

const seedance: InputBuilder = (task, imageUrl) => ({
  prompt: prompt(task),
  duration: task.durationSeconds,
  resolution: task.size,
  ...(imageUrl ? { image: imageUrl } : { aspect_ratio: task.aspectRatio }),
  ...seed(task),
});

/** The start frame's field is the version's own (replicate-versions.ts): `start_image`, or `start_image_url` before. */
const ray2: InputBuilder = (task, imageUrl, imageField = 'start_image') => ({
  prompt: prompt(task),
  duration: task.durationSeconds,
  aspect_ratio: task.aspectRatio,
  ...named(imageField, imageUrl),
});

const FLUX_RATIOS = new Set(['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21']);

/**
 * The listed ratio nearest the size's (FLUX dev and schnell take no other): 1344x768 (7:4) asks
 * for 16:9, not a square (docs/providers.md, "Request schemas").
 */
function nearestFluxRatio(task: ProviderTask): string {
  if (FLUX_RATIOS.has(task.aspectRatio)) return task.aspectRatio;
  const wanted = Math.log(task.width / task.height);
  const distance = (ratio: string): number => {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    return Math.abs(Math.log(w / h) - wanted);
  };
  return [...FLUX_RATIOS].reduce((best, ratio) => (distance(ratio) < distance(best) ? ratio : best));
}

/** FLUX dev and schnell take an aspect ratio from a fixed list and up to 4 outputs. */
const flux: InputBuilder = (task) => ({
  prompt: prompt(task),
  aspect_ratio: nearestFluxRatio(task),
  num_outputs: task.count,
  ...seed(task),
});

/** FLUX 1.1 Pro makes one image; any other ratio is `custom` with the size (multiples of 32). */
const fluxPro: InputBuilder = (task) => ({
  prompt: prompt(task),
  ...(FLUX_RATIOS.has(task.aspectRatio)
    ? { aspect_ratio: task.aspectRatio }
    : { aspect_ratio: 'custom', width: roundTo32(task.width), height: roundTo32(task.height) }),
  ...seed(task),
});

function roundTo32(pixels: number): number {
  return Math.min(1440, Math.max(256, Math.round(pixels / 32) * 32));
}

interface ReplicateModel {
  input: InputBuilder;
  /** Defaults the request's own parameters may override. */
  defaults?: Record<string, unknown>;
  /** v1 parameter names this model spells differently. */
  rename?: Record<string, string>;
}

/** PNG rather than the default WebP: lossless, and every image pipeline takes it. */
const FLUX_DEFAULTS = { output_format: 'png' };

export const REPLICATE_MODELS: Readonly<Record<string, ReplicateModel>> = {
  'kwaivgi/kling-v2.1': { input: kling },
  'google/veo-3': { input: veo3 },
  'google/veo-3-fast': { input: veo3 },
  'wan-video/wan-2.2-t2v-fast': { input: wan },
  'wan-video/wan-2.2-i2v-fast': { input: wan },
  'minimax/hailuo-02': { input: hailuo },
  'bytedance/seedance-1-lite': { input: seedance },
  'luma/ray-2-720p': { input: ray2 },
  'black-forest-labs/flux-dev': { input: flux, defaults: FLUX_DEFAULTS, rename: { guidance_scale: 'guidance' } },
  'black-forest-labs/flux-schnell': { input: flux, defaults: FLUX_DEFAULTS },
  'black-forest-labs/flux-1.1-pro': { input: fluxPro, defaults: FLUX_DEFAULTS },
};

/**
 * The model's input: its defaults, then the request's own parameters by name (renamed where this
 * model spells one differently), then the fields mapped from the v1 request, which win.
 */
export function replicateInput(
  task: ProviderTask,
  imageUrl?: string,
  imageField?: string,
  endImageUrl?: string,
): Record<string, unknown> {
  const model = REPLICATE_MODELS[task.path];
  // The end frame's field: Hailuo's `last_frame_image`; Ray 2's follows its start frame's version.
  const endName =
    task.path === 'minimax/hailuo-02'
      ? 'last_frame_image'
      : imageField === 'start_image_url'
        ? 'end_image_url'
        : 'end_image';
  const end = endImageUrl ? endImageField('replicate', task.path, endName, endImageUrl, task.inputSchema) : {};
  // A synced model: its offer names the model's own inputs (docs/providers.md, "Syncing the catalog").
  if (!model && task.inputs) return { ...mappedInput(task, task.inputs, imageUrl), ...end };
  if (!model) {
    throw new ProviderError('replicate', 'invalid_input', `Replicate has no model ${task.path} in this adapter`);
  }
  const parameters: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(task.parameters)) parameters[model.rename?.[name] ?? name] = value;
  return { ...model.defaults, ...parameters, ...model.input(task, imageUrl, imageField), ...end };
}

/* ---------------------------------------------------------------------------------------------- */
/* Predictions → job status.                                                                       */

function outputsOf(output: unknown): ProviderOutput[] {
  const values = Array.isArray(output) ? (output as unknown[]) : [output];
  const outputs: ProviderOutput[] = [];
  for (const value of values) {
    if (typeof value !== 'string') continue;
    if (/^https?:\/\//.test(value)) outputs.push({ url: value });
    const inline = /^data:([^;,]+);base64,(.*)$/s.exec(value);
    if (inline) outputs.push({ data: Buffer.from(inline[2]!, 'base64'), mime: inline[1]! });
  }
  return outputs;
}

/** A prediction (from a poll or a verified webhook) as a job status. */
export function statusOf(prediction: unknown): JobStatus {
  const p = (prediction ?? {}) as Partial<Pick<Prediction, 'status' | 'output' | 'error'>>;
  switch (p.status) {
    case 'starting':
      return { status: 'queued' };
    case 'processing':
      return { status: 'running' };
    case 'canceled':
      return { status: 'canceled' };
    case 'aborted':
      // Stopped before it started (its deadline passed in Replicate's queue): nothing was made,
      // and another provider may make it.
      return {
        status: 'failed',
        error: new ProviderError('replicate', 'failed', 'Replicate aborted the prediction before it ran'),
      };
    case 'failed': {
      const reason = excerpt(typeof p.error === 'string' && p.error ? p.error : 'the prediction failed');
      const error = contentPolicy(reason)
        ? new ProviderError(
            'replicate',
            'content_policy',
            `Replicate refused the request under its content policy: ${reason}`,
          )
        : new ProviderError('replicate', 'failed', `Replicate: the prediction failed: ${reason}`);
      return { status: 'failed', error };
    }
    case 'succeeded': {
      const outputs = outputsOf(p.output);
      if (outputs.length === 0) {
        const error = new ProviderError('replicate', 'malformed', 'Replicate reported success without any output');
        return { status: 'failed', error };
      }
      return { status: 'succeeded', outputs };
    }
    default:
      return {
        status: 'failed',
        error: new ProviderError(
          'replicate',
          'malformed',
          'Replicate answered a prediction status it does not document',
        ),
      };
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Signed webhooks (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).            */

/**
 * The account's webhook signing secret (`GET /v1/webhooks/default/secret`), held in memory only,
 * by a hash of key and base URL. `webhook()` is synchronous, so it is fetched before deliveries
 * can arrive: at submit, or at the first poll after a restart.
 */
const webhookSecrets = new Map<string, string>();

function secretSlot(settings: AdapterSettings): string {
  return createHash('sha256')
    .update(`${settings.baseUrl ?? DEFAULT_BASE_URL}\n${settings.apiKey}`)
    .digest('hex');
}

async function ensureWebhookSecret(
  settings: AdapterSettings,
  replicate: Replicate,
  signal: AbortSignal,
): Promise<void> {
  if (!settings.webhookUrl || webhookSecrets.has(secretSlot(settings))) return;
  const answer: { key?: unknown } = await replicate.webhooks.default.secret.get({ signal });
  if (typeof answer?.key === 'string' && answer.key.startsWith('whsec_')) {
    webhookSecrets.set(secretSlot(settings), answer.key);
  }
}

/** Whether the delivery carries a valid signature by `secret` (any of the space-separated `v1,…`). */
export function verifyReplicateSignature(
  secret: string,
  headers: Record<string, string>,
  body: Buffer,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.slice(secret.indexOf('_') + 1), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  return signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/* ---------------------------------------------------------------------------------------------- */

async function upload(
  replicate: Replicate,
  task: ProviderTask,
  start: StartImage | undefined,
): Promise<string | undefined> {
  if (!start) return undefined;
  const bytes = await readFile(start.path);
  const file = new File([bytes], basename(start.path), { type: start.mime });
  const created: { urls?: { get?: unknown } } = await replicate.files.create(file, {}, { signal: task.signal });
  const url = created?.urls?.get;
  if (typeof url !== 'string')
    throw new ProviderError('replicate', 'malformed', 'Replicate stored the start image without a URL');
  return url;
}

export const replicateAdapter: ProviderAdapter = {
  id: 'replicate',
  name: 'Replicate',
  description: 'Replicate: Kling, Veo 3, Wan, Hailuo, Seedance, Luma Ray 2 and FLUX as hosted models.',
  envKey: 'REPLICATE_API_TOKEN',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: true,
  startImage: 'upload',

  /** `GET /v1/account`: who the token belongs to; makes nothing. */
  async testKey(settings, signal) {
    try {
      const replicate = await client(settings);
      const account: { username?: unknown } = await replicate.accounts.current({ signal });
      if (typeof account?.username !== 'string') {
        throw new ProviderError('replicate', 'malformed', 'Replicate answered the account query without an account');
      }
    } catch (err) {
      throw normalizeError('replicate', NAME, settings.apiKey, err, signal);
    }
  },

  async submit(settings, task) {
    try {
      // A client per API call: its guarded fetch stops at the first failure of that call.
      const imageUrl = await upload(await client(settings), task, task.startImage);
      const endUrl = await upload(await client(settings), task, task.endImage);
      const imageField = imageUrl
        ? await startImageField(await client(settings), baseUrlOf(settings), task.path, task.signal)
        : undefined;
      // Checked against the model's schema: what Replicate would refuse is refused here, unpaid.
      const body = replicateInput(task, imageUrl, imageField, endUrl);
      const input = checkedInput('replicate', task.path, body, task.inputSchema);
      // Without the secret, deliveries only name the job and the runner polls: no reason to fail here.
      await ensureWebhookSecret(settings, await client(settings), task.signal).catch(() => undefined);
      const replicate = await client(settings);
      const prediction: Prediction = await replicate.predictions.create({
        model: task.path,
        input,
        signal: task.signal,
        ...(settings.webhookUrl ? { webhook: settings.webhookUrl, webhook_events_filter: ON_COMPLETION } : {}),
      });
      if (typeof prediction?.id !== 'string' || !prediction.id) {
        throw new ProviderError('replicate', 'malformed', 'Replicate accepted the prediction without an id');
      }
      return { id: prediction.id, state: { model: task.path } };
    } catch (err) {
      throw normalizeError('replicate', NAME, settings.apiKey, err, task.signal);
    }
  },

  async poll(settings, job, signal) {
    try {
      await ensureWebhookSecret(settings, await client(settings), signal).catch(() => undefined);
      const replicate = await client(settings);
      const prediction: Prediction = await replicate.predictions.get(job.id, { signal });
      return statusOf(prediction);
    } catch (err) {
      throw normalizeError('replicate', NAME, settings.apiKey, err, signal);
    }
  },

  async cancel(settings, job, signal) {
    try {
      const replicate = await client(settings);
      await replicate.predictions.cancel(job.id, { signal });
    } catch (err) {
      const error = normalizeError('replicate', NAME, settings.apiKey, err, signal);
      // 404: gone; an already finished prediction answers 200 with its final state.
      if (error.status === 404) return;
      throw error;
    }
  },

  /**
   * A delivery is the prediction itself, signed. With the account's secret at hand, a bad or
   * missing signature (or a stale timestamp) rejects it, and a good one carries the status. Before
   * the secret is known (just after a restart) the delivery only names the job, and the runner's
   * poll, made with our key against Replicate, decides.
   */
  webhook(settings, delivery) {
    return Promise.resolve(replicateDelivery(settings, delivery));
  },
};

/** A delivery → the prediction it names, with its status when its signature verified (see webhook()). */
function replicateDelivery(
  settings: AdapterSettings,
  delivery: { headers: Record<string, string>; body: Buffer },
): WebhookDelivery | undefined {
  let prediction: unknown;
  try {
    prediction = JSON.parse(delivery.body.toString('utf8'));
  } catch {
    return undefined;
  }
  const id = (prediction as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || !PREDICTION_ID.test(id)) return undefined;
  // Every Replicate delivery is signed: one without the headers is not Replicate's.
  const { headers } = delivery;
  if (!headers['webhook-id'] || !headers['webhook-timestamp'] || !headers['webhook-signature']) return undefined;
  const secret = webhookSecrets.get(secretSlot(settings));
  if (!secret) return { jobId: id };
  if (!verifyReplicateSignature(secret, delivery.headers, delivery.body)) return undefined;
  return { jobId: id, status: statusOf(prediction) };
}
