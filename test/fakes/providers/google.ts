import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { behaviourOf, problemText, rateLimitedPoll, schemaRefusal } from './behaviour.ts';
import { startLoopback } from './loopback.ts';
import { fakeMedia, serveFile } from './media.ts';
import type { FakeOptions, FakeScenario, RunningFake } from './types.ts';

/**
 * A contract fake of the Gemini Developer API's Veo surface, as the Gemini API docs describe it:
 * - `GET /v1beta/models` — the model list (the adapter's key test);
 * - `POST /v1beta/models/{model}:predictLongRunning` with `{instances: [{prompt, image?}], parameters}`
 *   → `{name: "models/{model}/operations/{id}"}`;
 * - `GET /v1beta/models/{model}/operations/{id}` → `{name, done?, response | error}`; a finished
 *   operation's `response.generateVideoResponse.generatedSamples[].video.uri` names a file;
 * - `GET /v1beta/files/{id}:download?alt=media` — the MP4, which needs the key like the API does.
 *
 * Every call needs the key in `x-goog-api-key` (or `?key=`): none is 403 PERMISSION_DENIED and a
 * wrong one is Google's 400 INVALID_ARGUMENT with reason API_KEY_INVALID. Errors are
 * `{error: {code, message, status, details?}}`.
 *
 * Scenarios, taken by each job when it is created: `unauthorized` refuses every call with 401
 * UNAUTHENTICATED; `rate_limited` (429 RESOURCE_EXHAUSTED, Retry-After and RetryInfo),
 * `server_error` (503 UNAVAILABLE) and `malformed` (a 200 that is not JSON) answer the submit;
 * `fail` ends in an operation error, `cancel` in CANCELLED (the operation was cancelled on
 * Google's side: the API offers no cancel of its own), `content_policy` in a response with
 * `raiMediaFilteredReasons` and no sample, `no_output` in an empty response, and `slow` never
 * finishes.
 */

interface Job {
  id: string;
  model: string;
  scenario: FakeScenario;
  polls: number;
  fileId: string;
}

/** The Veo models the Developer API lists (`GET /v1beta/models`), and the only ones it runs. */
const MODELS = [
  {
    name: 'models/veo-3.0-generate-001',
    displayName: 'Veo 3',
    supportedGenerationMethods: ['predictLongRunning'],
  },
  {
    name: 'models/veo-3.0-fast-generate-001',
    displayName: 'Veo 3 fast',
    supportedGenerationMethods: ['predictLongRunning'],
  },
  {
    name: 'models/veo-2.0-generate-001',
    displayName: 'Veo 2',
    supportedGenerationMethods: ['predictLongRunning'],
  },
];

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export async function startGoogleFake(options: FakeOptions = {}): Promise<RunningFake> {
  const media = await fakeMedia();
  const key = options.key ?? 'test-google-key-0001';
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const jobs = new Map<string, Job>();
  const files = new Set<string>();
  let created = 0;
  const fake: RunningFake = {
    baseUrl: '',
    key,
    scenario: options.scenario ?? 'succeed',
    behaviour: behaviourOf(options),
    requests: [],
    submissions: () => created,
    // Set once the loopback server listens, below.
    close: () => Promise.resolve(),
  };

  function error(res: ServerResponse, code: number, message: string, extra: Record<string, unknown> = {}): void {
    const body = { error: { code, message, status: STATUS_NAMES[code] ?? 'UNKNOWN', ...extra } };
    res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
  }
  function json(res: ServerResponse, body: unknown): void {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
  }

  /** False when the call was refused (the answer is already sent). */
  function authorised(req: IncomingMessage, url: URL, res: ServerResponse): boolean {
    const given = req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
    if (given === undefined) {
      error(
        res,
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      );
      return false;
    }
    if (given !== key) {
      error(res, 400, 'API key not valid. Please pass a valid API key.', {
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
            metadata: { service: 'generativelanguage.googleapis.com' },
          },
        ],
      });
      return false;
    }
    if (fake.scenario === 'unauthorized') {
      error(res, 401, 'Request had invalid authentication credentials.');
      return false;
    }
    return true;
  }

  function submit(res: ServerResponse, model: string, body: unknown): void {
    const scenario = fake.scenario;
    if (scenario === 'rate_limited') {
      res.setHeader('retry-after', String(retryAfterSeconds));
      error(res, 429, 'Resource has been exhausted (e.g. check quota).', {
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` }],
      });
      return;
    }
    if (scenario === 'server_error') {
      error(res, 503, 'The model is overloaded. Please try again later.');
      return;
    }
    if (!MODELS.some((m) => m.name === `models/${model}`)) {
      error(
        res,
        404,
        `models/${model} is not found for API version v1beta, or is not supported for predictLongRunning.`,
      );
      return;
    }
    const parameters = isRecord(body) && isRecord(body['parameters']) ? body['parameters'] : {};
    const aspectRatio = parameters['aspectRatio'];
    if (aspectRatio !== undefined && aspectRatio !== '16:9' && aspectRatio !== '9:16') {
      error(
        res,
        400,
        `Aspect ratio ${JSON.stringify(aspectRatio)} is not supported. Supported values are 16:9 and 9:16.`,
      );
      return;
    }
    const instance = isRecord(body) && Array.isArray(body['instances']) ? body['instances'][0] : undefined;
    if (!isRecord(instance) || typeof instance['prompt'] !== 'string' || instance['prompt'] === '') {
      error(res, 400, '* GenerateVideoRequest.instances[0].prompt: A prompt is required.');
      return;
    }
    // The model's input schema (the adapters check with the same file), in Google's words.
    const refused = schemaRefusal('google', model, body);
    if (refused) {
      error(res, 400, refused.map((p) => `* GenerateVideoRequest.${p.field}: ${problemText(p)}`).join('\n'));
      return;
    }
    const image = instance['image'];
    if (
      image !== undefined &&
      (!isRecord(image) || typeof image['bytesBase64Encoded'] !== 'string' || typeof image['mimeType'] !== 'string')
    ) {
      error(res, 400, "Invalid value at 'instances[0].image': expected bytesBase64Encoded and mimeType.");
      return;
    }
    if (scenario === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end('{"name": "models/');
      return;
    }
    created += 1;
    const id = randomUUID().replace(/-/g, '').slice(0, 12);
    const name = `models/${model}/operations/${id}`;
    jobs.set(name, { id, model, scenario, polls: 0, fileId: randomUUID().replace(/-/g, '').slice(0, 16) });
    json(res, { name });
  }

  function operation(res: ServerResponse, name: string): void {
    const limited = { error: { code: 429, message: 'Resource has been exhausted.', status: 'RESOURCE_EXHAUSTED' } };
    if (rateLimitedPoll(fake.behaviour, res, limited)) return;
    const job = jobs.get(name);
    if (!job) {
      error(res, 404, `Operation ${name} not found.`);
      return;
    }
    job.polls += 1;
    const metadata = { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningMetadata' };
    if (job.scenario === 'slow' || job.polls <= pollsBeforeDone) {
      json(res, { name, metadata });
      return;
    }
    const responseType = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
    switch (job.scenario) {
      case 'fail':
        json(res, {
          name,
          metadata,
          done: true,
          error: { code: 13, message: 'Video generation failed due to an internal error.' },
        });
        return;
      case 'cancel':
        json(res, { name, metadata, done: true, error: { code: 1, message: 'Operation was cancelled.' } });
        return;
      case 'content_policy':
        json(res, {
          name,
          metadata,
          done: true,
          response: {
            '@type': responseType,
            generateVideoResponse: {
              raiMediaFilteredCount: 1,
              raiMediaFilteredReasons: [
                'We encountered an issue with the audio for your prompt. Please try rephrasing your prompt.',
              ],
            },
          },
        });
        return;
      case 'no_output':
        json(res, { name, metadata, done: true, response: { '@type': responseType, generateVideoResponse: {} } });
        return;
      default: {
        files.add(job.fileId);
        const uri = `${fake.baseUrl}/v1beta/files/${job.fileId}:download?alt=media`;
        json(res, {
          name,
          metadata,
          done: true,
          response: { '@type': responseType, generateVideoResponse: { generatedSamples: [{ video: { uri } }] } },
        });
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    if (!authorised(req, url, res)) return;
    if (req.method === 'GET' && path === '/v1beta/models') {
      json(res, { models: MODELS });
      return;
    }
    const predict = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(path);
    if (req.method === 'POST' && predict) {
      submit(res, decodeURIComponent(predict[1]!), body);
      return;
    }
    const op = /^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/.exec(path);
    if (req.method === 'GET' && op) {
      operation(res, op[1]!);
      return;
    }
    const file = /^\/v1beta\/files\/([^/:]+):download$/.exec(path);
    if ((req.method === 'GET' || req.method === 'HEAD') && file && files.has(file[1]!)) {
      if (fake.behaviour.expiredOutputs) {
        error(res, 404, `File ${file[1]!} was not found.`);
        return;
      }
      await serveFile(req, res, media.video);
      return;
    }
    error(res, 404, `Method not found: ${req.method} ${path}`);
  }

  const loop = await startLoopback(async (request, res, http) => {
    if (request.raw.length > 0 && request.body === undefined) {
      error(res, 400, 'Invalid JSON payload received.');
      return;
    }
    await handle(http, res, request.body);
  });
  fake.baseUrl = loop.baseUrl;
  fake.requests = loop.requests;
  fake.close = () => loop.close();
  return fake;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
