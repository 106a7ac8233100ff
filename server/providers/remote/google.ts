import { readFile } from 'node:fs/promises';
import type { GenerateVideosOperation, GoogleGenAI } from '@google/genai';
import { ProviderError } from './contract.ts';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderErrorClass,
  ProviderOutput,
  ProviderTask,
} from './contract.ts';
import { checkedInput } from './input-schemas.ts';
import { loadOnce } from './load-once.ts';

/**
 * Google's Veo models through the Gemini Developer API (an AI Studio key, `GEMINI_API_KEY`).
 *
 * A Veo generation is a long-running operation: `POST /v1beta/models/{model}:predictLongRunning`
 * answers `{name}`, and `GET /v1beta/{name}` answers `{done, response | error}` until done; the
 * finished response carries `generateVideoResponse.generatedSamples[].video.uri`, a file URI that
 * only answers with the key in `x-goog-api-key`, or `raiMediaFilteredReasons` when the safety
 * filters refused the prompt or image. Errors are Google's `{error: {code, message, status}}`.
 *
 * `@google/genai` 3.x wraps `models.generateVideos` for the Enterprise Agent Platform (Vertex) only
 * and throws for the Developer API, though the REST method is still the documented one. So the
 * submit goes through the SDK's own HTTP client (base URL, API version, auth header, `ApiError`)
 * on the documented path and body; polling is the SDK's `operations.getVideosOperation`, which
 * still speaks the Developer API. The Gemini API has no cancel for Veo operations, so cancel
 * is a no-op: the runner simply stops polling (the provider may still charge for the clip).
 */

const PROVIDER = 'google';
const NAME = 'Google Gemini API';
const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';
const API_VERSION = 'v1beta';
/** The Gemini API refuses requests over 20 MB; the image travels base64-encoded inside one. */
const MAX_INLINE_IMAGE_BYTES = 14 * 1024 * 1024;
const IMAGE_MIMES = ['image/png', 'image/jpeg', 'image/webp'];

/** What each catalog model accepts (Gemini API Veo docs); other paths pass through unchecked. */
interface VeoModel {
  durations: number[];
  aspectRatios: string[];
  /** Output resolutions; `resolution` is only sent to models that take it. */
  resolutions: string[];
  takesResolution: boolean;
  /**
   * `personGeneration` by task (Gemini API Veo docs; input-schemas/google.json): Veo 3 takes
   * allow_all from text and allow_adult from an image; Veo 2 also dont_allow, and allow_all from text only.
   */
  people: { text: string[]; image: string[] };
}
const VEO3: VeoModel = {
  durations: [8],
  aspectRatios: ['16:9', '9:16'],
  resolutions: ['720p', '1080p'],
  takesResolution: true,
  people: { text: ['allow_all'], image: ['allow_adult'] },
};
/** Any other path: the values the API knows, whatever the task. */
const ANY_PEOPLE = ['allow_all', 'allow_adult', 'dont_allow'];
export const GOOGLE_VEO_MODELS: Record<string, VeoModel> = {
  'veo-3.0-generate-001': VEO3,
  'veo-3.0-fast-generate-001': VEO3,
  'veo-2.0-generate-001': {
    durations: [5, 6, 7, 8],
    aspectRatios: ['16:9', '9:16'],
    resolutions: ['720p'],
    takesResolution: false,
    people: { text: ['allow_all', 'allow_adult', 'dont_allow'], image: ['allow_adult', 'dont_allow'] },
  },
};

/** The SDK's Developer API client, plus the one documented REST call its 3.x no longer wraps. */
interface GeminiClient extends GoogleGenAI {
  predictLongRunning(model: string, body: unknown, signal: AbortSignal): Promise<unknown>;
}

/**
 * The SDK and the client class built on it, both on first use (docs/providers.md, "SDKs load on
 * first use"): the subclass can only be declared once its base class is loaded.
 */
const loadSdk = loadOnce(async () => {
  const sdk = await import('@google/genai');
  class Gemini extends sdk.GoogleGenAI implements GeminiClient {
    async predictLongRunning(model: string, body: unknown, signal: AbortSignal): Promise<unknown> {
      const response = await this.apiClient.request({
        path: `models/${model}:predictLongRunning`,
        body: JSON.stringify(body),
        httpMethod: 'POST',
        abortSignal: signal,
      });
      return response.json();
    }
  }
  return { sdk, Gemini };
});
type GoogleSdk = Awaited<ReturnType<typeof loadSdk>>;

/** One client per call (settings may change between calls); `seen` keeps the last Retry-After. */
function connect({ Gemini }: GoogleSdk, settings: AdapterSettings, seen: { retryAfterSeconds?: number }): GeminiClient {
  return new Gemini({
    apiKey: settings.apiKey,
    // Explicit, so that GOOGLE_GENAI_USE_VERTEXAI / GOOGLE_GENAI_API_VERSION in the environment
    // cannot turn this into another API.
    vertexai: false,
    httpOptions: {
      baseUrl: settings.baseUrl ?? DEFAULT_BASE_URL,
      apiVersion: API_VERSION,
      // The SDK's ApiError keeps the status and body but not the headers; Retry-After is read here.
      fetch: async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
        const response = await fetch(input, init);
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        if (retryAfter !== undefined) seen.retryAfterSeconds = retryAfter;
        return response;
      },
    },
  });
}

async function call<T>(
  settings: AdapterSettings,
  what: string,
  fn: (client: GeminiClient, sdk: GoogleSdk['sdk']) => Promise<T>,
): Promise<T> {
  const loaded = await loadSdk();
  const seen: { retryAfterSeconds?: number } = {};
  try {
    return await fn(connect(loaded, settings, seen), loaded.sdk);
  } catch (err) {
    throw normaliseError(loaded.sdk, err, settings.apiKey, what, seen.retryAfterSeconds);
  }
}

export const googleAdapter: ProviderAdapter = {
  id: PROVIDER,
  name: 'Google (Gemini API)',
  description: 'Veo video models through the Gemini Developer API, with a Google AI Studio key.',
  envKey: 'GEMINI_API_KEY',
  defaultBaseUrl: DEFAULT_BASE_URL,
  webhooks: false,
  startImage: 'data_uri',

  async testKey(settings, signal) {
    await call(settings, 'listing models', (ai) => ai.models.list({ config: { pageSize: 1, abortSignal: signal } }));
  },

  async submit(settings, task) {
    const body = await requestBody(task);
    const answer = await call(settings, 'starting a video', (ai) =>
      ai.predictLongRunning(task.path, body, task.signal),
    );
    const name = isRecord(answer) && typeof answer['name'] === 'string' ? answer['name'] : '';
    if (!name)
      throw new ProviderError(PROVIDER, 'malformed', `${NAME} started a video but answered no operation name.`);
    return { id: name, state: { model: task.path } };
  },

  async poll(settings, job, signal) {
    const next = await call(settings, 'polling a video', (ai, sdk) => {
      const operation = new sdk.GenerateVideosOperation();
      operation.name = job.id;
      return ai.operations.getVideosOperation({ operation, config: { abortSignal: signal } });
    });
    return operationStatus(next, settings);
  },

  cancel() {
    // The Gemini API documents no cancel for Veo operations: stopping the polls is all there is.
    return Promise.resolve();
  },
};

/** The v1 task → the documented predictLongRunning body. */
export async function requestBody(task: ProviderTask): Promise<Record<string, unknown>> {
  const model = GOOGLE_VEO_MODELS[task.path];
  const refuse = (message: string): never => {
    throw new ProviderError(PROVIDER, 'invalid_input', `${NAME} (${task.path}): ${message}`);
  };
  if (task.kind !== 'video') refuse('only makes videos.');
  const resolution = task.size.toLowerCase();
  if (model) {
    if (!model.durations.includes(task.durationSeconds))
      refuse(`duration ${task.durationSeconds}s is not one of ${model.durations.join(', ')} seconds.`);
    if (!model.aspectRatios.includes(task.aspectRatio))
      refuse(`aspect ratio ${task.aspectRatio} is not one of ${model.aspectRatios.join(', ')}.`);
    if (!model.resolutions.includes(resolution))
      refuse(`size ${task.size} is not one of ${model.resolutions.join(', ')}.`);
    // Veo 3 renders 1080p in landscape only.
    if (resolution === '1080p' && task.aspectRatio !== '16:9') refuse('1080p is offered in 16:9 only.');
  }

  const instance: Record<string, unknown> = { prompt: task.prompt };
  if (task.startImage) {
    const { path, mime, bytes } = task.startImage;
    if (!IMAGE_MIMES.includes(mime)) refuse(`a start image must be PNG, JPEG or WebP, not ${mime}.`);
    if (bytes > MAX_INLINE_IMAGE_BYTES)
      refuse(`a start image may be at most ${MAX_INLINE_IMAGE_BYTES / 1024 / 1024} MB inline.`);
    instance['image'] = { bytesBase64Encoded: (await readFile(path)).toString('base64'), mimeType: mime };
  }

  const parameters: Record<string, unknown> = {
    aspectRatio: task.aspectRatio,
    durationSeconds: task.durationSeconds,
  };
  if (!model || model.takesResolution) parameters['resolution'] = resolution;
  const negative = task.parameters['negative_prompt'];
  if (negative !== undefined) {
    if (typeof negative !== 'string') refuse('negative_prompt must be text.');
    parameters['negativePrompt'] = negative;
  }
  const people = task.parameters['person_generation'];
  if (people !== undefined) {
    const allowed = model ? model.people[task.startImage ? 'image' : 'text'] : ANY_PEOPLE;
    const from = task.startImage ? 'from a start image' : 'from text';
    if (typeof people !== 'string' || !allowed.includes(people))
      refuse(`person_generation must be ${allowed.join(' or ')} ${from}, not ${JSON.stringify(people)}.`);
    parameters['personGeneration'] = people;
  }
  // The model's schema has the last word: what the API would refuse is refused here, unpaid.
  return checkedInput(PROVIDER, task.path, { instances: [instance], parameters }, task.inputSchema);
}

function operationStatus(op: GenerateVideosOperation, settings: AdapterSettings): JobStatus {
  if (!op.done) return { status: 'running' };
  if (op.error) {
    const code = typeof op.error['code'] === 'number' ? op.error['code'] : undefined;
    const message = redact(
      typeof op.error['message'] === 'string' ? op.error['message'] : 'no reason given',
      settings.apiKey,
    );
    // google.rpc.Code: 1 CANCELLED, 3 INVALID_ARGUMENT.
    if (code === 1) return { status: 'canceled' };
    const errorClass: ProviderErrorClass = code === 3 ? 'invalid_input' : 'failed';
    return {
      status: 'failed',
      error: new ProviderError(PROVIDER, errorClass, `${NAME}: the video failed: ${message}`),
    };
  }
  const response = op.response;
  const outputs: ProviderOutput[] = [];
  for (const sample of response?.generatedVideos ?? []) {
    const video = sample.video;
    if (video?.uri) outputs.push(downloadable(video.uri, settings));
    else if (video?.videoBytes)
      outputs.push({ data: Buffer.from(video.videoBytes, 'base64'), mime: video.mimeType ?? 'video/mp4' });
  }
  if (outputs.length > 0) return { status: 'succeeded', outputs };
  const reasons = response?.raiMediaFilteredReasons ?? [];
  if (reasons.length > 0 || (response?.raiMediaFilteredCount ?? 0) > 0) {
    const why = reasons.length > 0 ? reasons.join(' ') : 'the safety filters removed the video';
    return {
      status: 'failed',
      error: new ProviderError(
        PROVIDER,
        'content_policy',
        `${NAME} refused the request: ${redact(why, settings.apiKey)}`,
      ),
    };
  }
  return {
    status: 'failed',
    error: new ProviderError(PROVIDER, 'malformed', `${NAME} finished the operation without a video.`),
  };
}

/**
 * A video file URI: downloaded with the key in a header, never in the URL. The key is only
 * sent to the API's own host, so an answer naming another host cannot collect it.
 */
function downloadable(uri: string, settings: AdapterSettings): ProviderOutput {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ProviderError(PROVIDER, 'malformed', `${NAME} answered a video URI that is not a URL.`);
  }
  const trusted = new Set([new URL(DEFAULT_BASE_URL).origin, new URL(settings.baseUrl ?? DEFAULT_BASE_URL).origin]);
  if (!trusted.has(url.origin))
    throw new ProviderError(PROVIDER, 'malformed', `${NAME} answered a video URI on another host (${url.host}).`);
  url.searchParams.delete('key');
  return { url: url.toString(), headers: { 'x-goog-api-key': settings.apiKey } };
}

interface GoogleErrorBody {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<Record<string, unknown>>;
}

/** Any SDK or network failure → the ProviderError class the service acts on. */
function normaliseError(
  sdk: GoogleSdk['sdk'],
  err: unknown,
  key: string,
  what: string,
  retryAfterSeconds?: number,
): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.ApiError) {
    const body = parseErrorBody(err.message);
    const status = err.status;
    const detail = redact(typeof body.message === 'string' ? body.message : '', key);
    const said = detail ? `: ${detail}` : '';
    const reasons = (body.details ?? []).map((d) => d['reason']).filter((r) => typeof r === 'string');
    const make = (errorClass: ProviderErrorClass, message: string, retry?: number): ProviderError =>
      new ProviderError(PROVIDER, errorClass, message, {
        status,
        ...(retry !== undefined ? { retryAfterSeconds: retry } : {}),
        cause: err,
      });
    // A wrong key is a 400 INVALID_ARGUMENT with reason API_KEY_INVALID, not a 401.
    if (status === 401 || status === 403 || reasons.includes('API_KEY_INVALID'))
      return make('auth', `${NAME} refused the key (HTTP ${status})${said}`);
    if (status === 429) {
      const retry = retryAfterSeconds ?? retryDelaySeconds(body);
      return make('rate_limited', `${NAME} is rate limiting requests (HTTP 429)${said}`, retry);
    }
    if (status >= 500) return make('server', `${NAME} failed while ${what} (HTTP ${status})${said}`);
    if (status === 404) return make('failed', `${NAME} does not know this model or operation (HTTP 404)${said}`);
    return make('invalid_input', `${NAME} refused the request (HTTP ${status})${said}`);
  }
  if (err instanceof SyntaxError)
    return new ProviderError(PROVIDER, 'malformed', `${NAME} answered something that is not JSON while ${what}.`, {
      cause: err,
    });
  if (err instanceof Error && err.name === 'AbortError')
    return new ProviderError(PROVIDER, 'canceled', `${NAME}: ${what} was aborted.`, { cause: err });
  const message = err instanceof Error ? redact(err.message, key) : 'unknown error';
  return new ProviderError(PROVIDER, 'server', `${NAME} could not be reached while ${what}: ${message}`, {
    cause: err,
  });
}

/** The SDK puts the whole error body, as JSON, into the ApiError message. */
function parseErrorBody(message: string): GoogleErrorBody {
  try {
    const parsed: unknown = JSON.parse(message);
    if (isRecord(parsed) && isRecord(parsed['error'])) return parsed['error'];
  } catch {
    // Not JSON: the message itself is all there is.
  }
  return { message };
}

/** Google sends its wait as a google.rpc.RetryInfo detail (`"retryDelay": "30s"`). */
function retryDelaySeconds(body: GoogleErrorBody): number | undefined {
  for (const detail of body.details ?? []) {
    const delay = detail['retryDelay'];
    if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) return Math.ceil(Number.parseFloat(delay));
  }
  return undefined;
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
