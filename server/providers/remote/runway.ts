import type { RunwayML } from '@runwayml/sdk';
import type { TaskRetrieveResponse } from '@runwayml/sdk/resources/tasks';
import { ProviderError } from './contract.ts';
import type { AdapterSettings, JobStatus, ProviderAdapter, ProviderErrorClass, ProviderTask } from './contract.ts';
import { checkedInput } from './input-schemas.ts';
import { loadOnce } from './load-once.ts';
import { fitStartFrame } from './start-frame.ts';

/**
 * Runway's API through `@runwayml/sdk`: `POST /v1/image_to_video` starts a task (`{id}`),
 * `GET /v1/tasks/{id}` answers PENDING / THROTTLED / RUNNING / SUCCEEDED (`output: [url]`) /
 * FAILED (`failure`, `failureCode`) / CANCELLED, and `DELETE /v1/tasks/{id}` cancels it. Every
 * call carries `Authorization: Bearer <key>` and the `X-Runway-Version` the SDK pins. Runway has
 * no webhooks for tasks, so the runner polls.
 *
 * Gen-4 Turbo is image-to-video only: the start frame travels inline as a data URI, which Runway
 * takes up to 5 MB (docs.dev.runwayml.com/assets/inputs); a larger one is refused here, clearly,
 * rather than by Runway after the upload.
 */

const PROVIDER = 'runway';
const NAME = 'Runway';
const DEFAULT_BASE_URL = 'https://api.dev.runwayml.com';
/** Runway's limit on a data URI input (the whole URI, as sent). */
export const RUNWAY_MAX_DATA_URI_BYTES = 5 * 1000 * 1000;
const IMAGE_MIMES = ['image/png', 'image/jpeg', 'image/webp'];
/** Runway sells API credits at one US cent each; tasks report their cost in credits. */
const USD_PER_CREDIT = 0.01;

/** Gen-4 Turbo's output ratios (pixels) by the v1 aspect ratio. */
export const RUNWAY_GEN4_TURBO_RATIOS: Record<string, string> = {
  '16:9': '1280:720',
  '9:16': '720:1280',
  '4:3': '1104:832',
  '3:4': '832:1104',
  '1:1': '960:960',
  '21:9': '1584:672',
};
export const RUNWAY_GEN4_TURBO_DURATIONS = [2, 3, 4, 5, 6, 7, 8, 9, 10];

/** The SDK, imported on first use (docs/providers.md, "SDKs load on first use"). */
const loadSdk = loadOnce(() => import('@runwayml/sdk'));
type RunwaySdk = Awaited<ReturnType<typeof loadSdk>>;

function connect(sdk: RunwaySdk, settings: AdapterSettings): RunwayML {
  return new sdk.RunwayML({
    apiKey: settings.apiKey,
    baseURL: settings.baseUrl ?? DEFAULT_BASE_URL,
    // The runner owns retries (one for a 5xx, Retry-After for a 429), so the SDK makes none.
    maxRetries: 0,
  });
}

async function call<T>(settings: AdapterSettings, what: string, fn: (client: RunwayML) => Promise<T>): Promise<T> {
  const sdk = await loadSdk();
  try {
    return await fn(connect(sdk, settings));
  } catch (err) {
    throw normaliseError(sdk, err, settings.apiKey, what);
  }
}

export const runwayAdapter: ProviderAdapter = {
  id: PROVIDER,
  name: 'Runway',
  description: 'Runway Gen-4 Turbo image-to-video, with a Runway developer API key.',
  envKey: 'RUNWAYML_API_SECRET',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: false,
  startImage: 'data_uri',

  async testKey(settings, signal) {
    await call(settings, 'reading the organization', (client) => client.organization.retrieve({ signal }));
  },

  async submit(settings, task) {
    const body = await requestBody(task);
    const created = await call(settings, 'starting a video', (client) =>
      client.imageToVideo.create(body, { signal: task.signal }),
    );
    if (typeof created?.id !== 'string' || created.id === '')
      throw new ProviderError(PROVIDER, 'malformed', `${NAME} started a video but answered no task id.`);
    return { id: created.id, state: { model: task.path } };
  },

  async poll(settings, job, signal) {
    const found = await call(settings, 'polling a video', (client) => client.tasks.retrieve(job.id, { signal }));
    return taskStatus(found, settings.apiKey);
  },

  async cancel(settings, job, signal) {
    const sdk = await loadSdk();
    try {
      await connect(sdk, settings).tasks.delete(job.id, { signal });
    } catch (err) {
      // A task that is already gone (finished and deleted, or cancelled before) needs nothing.
      if (err instanceof sdk.APIError && err.status === 404) return;
      throw normaliseError(sdk, err, settings.apiKey, 'cancelling a video');
    }
  },
};

type Gen4TurboBody = Parameters<RunwayML['imageToVideo']['create']>[0] & { model: 'gen4_turbo' };

/** The v1 task → the `gen4_turbo` image-to-video body. */
export async function requestBody(task: ProviderTask): Promise<Gen4TurboBody> {
  const refuse = (message: string): never => {
    throw new ProviderError(PROVIDER, 'invalid_input', `${NAME} (${task.path}): ${message}`);
  };
  if (task.path !== 'gen4_turbo') refuse('only gen4_turbo is supported.');
  if (task.kind !== 'video') refuse('only makes videos.');
  const ratio = RUNWAY_GEN4_TURBO_RATIOS[task.aspectRatio];
  if (!ratio)
    return refuse(
      `aspect ratio ${task.aspectRatio} is not one of ${Object.keys(RUNWAY_GEN4_TURBO_RATIOS).join(', ')}.`,
    );
  // Gen-4 Turbo renders 720p only; the ratio above sets its pixels.
  if (task.size.toLowerCase() !== '720p') refuse(`size ${task.size} is not offered: Gen-4 Turbo renders 720p.`);
  if (!RUNWAY_GEN4_TURBO_DURATIONS.includes(task.durationSeconds))
    refuse(`duration ${task.durationSeconds}s is not a whole number of seconds from 2 to 10.`);
  if (!task.startImage) return refuse('Gen-4 Turbo makes video from a start image, and the request has none.');
  // Fitted to Runway's inline limits (a JPEG, smaller if need be) rather than refused.
  const frame = await fitStartFrame(
    task.startImage,
    { maxDataUriBytes: RUNWAY_MAX_DATA_URI_BYTES, mimes: IMAGE_MIMES },
    task.signal,
  );
  if (!frame) return refuse(tooLarge());
  const prompt = task.prompt.trim();
  if (prompt.length > 1000) refuse('the prompt may be at most 1000 characters.');
  const seed = task.seed;
  if (seed !== undefined && (!Number.isInteger(seed) || seed < 0 || seed > 4294967295))
    refuse('the seed must be a whole number from 0 to 4294967295.');

  const body: Gen4TurboBody = {
    model: 'gen4_turbo',
    promptImage: frame.dataUri,
    ratio: ratio as Gen4TurboBody['ratio'],
    duration: task.durationSeconds,
  };
  if (prompt) body.promptText = prompt;
  if (seed !== undefined) body.seed = seed;
  const publicFigures = task.parameters['public_figure_threshold'];
  if (publicFigures !== undefined) {
    if (publicFigures !== 'auto' && publicFigures !== 'low') refuse('public_figure_threshold must be auto or low.');
    body.contentModeration = { publicFigureThreshold: publicFigures as 'auto' | 'low' };
  }
  // The model's schema has the last word: what Runway would refuse is refused here, unpaid.
  return checkedInput(PROVIDER, task.path, body, task.inputSchema);
}

function tooLarge(): string {
  return `the start image could not be fitted into Runway's inline limit of ${RUNWAY_MAX_DATA_URI_BYTES / 1000 / 1000} MB, even as a smaller JPEG.`;
}

function taskStatus(found: TaskRetrieveResponse, key: string): JobStatus {
  switch (found?.status) {
    case 'PENDING':
    case 'THROTTLED':
      return { status: 'queued' };
    case 'RUNNING':
      return typeof found.progress === 'number'
        ? { status: 'running', progress: found.progress }
        : { status: 'running' };
    case 'CANCELLED':
      return { status: 'canceled' };
    case 'FAILED': {
      const code = typeof found.failureCode === 'string' ? found.failureCode : '';
      const reason = redact(typeof found.failure === 'string' ? found.failure : 'no reason given', key);
      const errorClass = failureClass(code);
      const said = code ? `${reason} (${code})` : reason;
      const message =
        errorClass === 'content_policy' ? `${NAME} refused the request: ${said}` : `${NAME}: the video failed: ${said}`;
      return { status: 'failed', error: new ProviderError(PROVIDER, errorClass, message) };
    }
    case 'SUCCEEDED': {
      const urls = Array.isArray(found.output) ? found.output.filter((u) => typeof u === 'string' && u !== '') : [];
      if (urls.length === 0)
        return {
          status: 'failed',
          error: new ProviderError(PROVIDER, 'malformed', `${NAME} finished the task without an output.`),
        };
      const credits = found.cost?.credits;
      return {
        status: 'succeeded',
        outputs: urls.map((url) => ({ url })),
        ...(typeof credits === 'number' ? { cost: Math.round(credits * USD_PER_CREDIT * 100) / 100 } : {}),
      };
    }
    default:
      return {
        status: 'failed',
        error: new ProviderError(PROVIDER, 'malformed', `${NAME} answered a task in an unknown state.`),
      };
  }
}

/**
 * Runway's task failure codes (docs.dev.runwayml.com/errors/task-failures): SAFETY.* is content
 * moderation (never retried), ASSET.INVALID and INPUT_PREPROCESSING.* are inputs Runway cannot use,
 * the rest (INTERNAL.*) are failures at Runway.
 */
function failureClass(code: string): ProviderErrorClass {
  if (code.startsWith('SAFETY.') || code.startsWith('INPUT_PREPROCESSING.SAFETY')) return 'content_policy';
  if (code.startsWith('ASSET.') || code.startsWith('INPUT_PREPROCESSING.')) return 'invalid_input';
  return 'failed';
}

/** Any SDK or network failure → the ProviderError class the service acts on. */
function normaliseError(sdk: RunwaySdk, err: unknown, key: string, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.APIUserAbortError)
    return new ProviderError(PROVIDER, 'canceled', `${NAME}: ${what} was aborted.`, { cause: err });
  if (err instanceof sdk.APIConnectionError)
    return new ProviderError(PROVIDER, 'server', `${NAME} could not be reached while ${what}.`, { cause: err });
  if (err instanceof sdk.APIError) {
    const status = typeof err.status === 'number' ? err.status : 0;
    const detail = redact(errorText(err.error), key);
    const said = detail ? `: ${detail}` : '';
    const make = (errorClass: ProviderErrorClass, message: string, retry?: number): ProviderError =>
      new ProviderError(PROVIDER, errorClass, message, {
        status,
        ...(retry !== undefined ? { retryAfterSeconds: retry } : {}),
        cause: err,
      });
    if (status === 401 || status === 403) return make('auth', `${NAME} refused the key (HTTP ${status})${said}`);
    if (status === 429) {
      const headers: unknown = err.headers;
      const retryAfter = headers instanceof Headers ? headers.get('retry-after') : null;
      return make('rate_limited', `${NAME} is rate limiting requests (HTTP 429)${said}`, parseRetryAfter(retryAfter));
    }
    if (status >= 500) return make('server', `${NAME} failed while ${what} (HTTP ${status})${said}`);
    if (status === 404) return make('failed', `${NAME} does not know this task (HTTP 404)${said}`);
    return make('invalid_input', `${NAME} refused the request (HTTP ${status})${said}`);
  }
  if (err instanceof SyntaxError)
    return new ProviderError(PROVIDER, 'malformed', `${NAME} answered something that is not JSON while ${what}.`, {
      cause: err,
    });
  const message = err instanceof Error ? redact(err.message, key) : 'unknown error';
  return new ProviderError(PROVIDER, 'server', `${NAME} failed while ${what}: ${message}`, { cause: err });
}

/** Runway's error bodies are `{error: "…"}`, with `issues` for a body that failed validation. */
function errorText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (typeof body !== 'object' || body === null) return '';
  const record = body as Record<string, unknown>;
  const text = typeof record['error'] === 'string' ? record['error'] : '';
  const issues = Array.isArray(record['issues'])
    ? record['issues']
        .map((issue: unknown) =>
          typeof issue === 'object' &&
          issue !== null &&
          typeof (issue as Record<string, unknown>)['message'] === 'string'
            ? String((issue as Record<string, unknown>)['message'])
            : '',
        )
        .filter(Boolean)
    : [];
  return [text, ...issues].filter(Boolean).join('; ');
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function redact(text: string, key: string): string {
  return key ? text.split(key).join('[redacted]') : text;
}
