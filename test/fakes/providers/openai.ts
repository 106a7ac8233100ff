/**
 * A contract fake of OpenAI's image API (api.openai.com/v1) on loopback, for the official `openai`
 * SDK through its `baseURL`. What it follows, from OpenAI's API reference and the SDK's types:
 * - Bearer auth; every refusal is `{"error": {message, type, param, code}}` with an `x-request-id`.
 * - `POST /v1/images/generations` answers synchronously: `{created, data: [{b64_json}], background,
 *   output_format, quality, size, usage}` with the token counts OpenAI bills for gpt-image-1
 *   (272/1056/4160 output tokens for a low/medium/high square image). Request fields are checked
 *   like OpenAI does (model, size, quality, output_format, background, moderation, n; no
 *   `response_format` for GPT image models).
 * - `GET /v1/models/{id}` and `GET /v1/models`: what the key test reads.
 * - Images are real (ffmpeg-made PNG, converted to JPEG or WebP when asked).
 *
 * Scenarios (OpenAI has no jobs, so every one applies to the requests made while it is set):
 * succeed; fail (500 on the generation); cancel (the generation is held until the client gives up,
 * for abort tests); slow (answers after pollsBeforeDone × 150 ms); content_policy (400
 * `moderation_blocked`); no_output (200 with `data: []`); unauthorized (401 that echoes the key,
 * as OpenAI does masked, so tests can prove it never travels further); rate_limited (429 +
 * Retry-After); server_error (503); malformed (200 whose JSON does not parse).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import { behaviourOf } from './behaviour.ts';
import { sendJson, sendMalformed, startLoopback } from './loopback.ts';
import type { FakeRequest } from './loopback.ts';
import { fakeMedia } from './media.ts';
import type { FakeOptions, RunningFake } from './types.ts';

const API = '/v1';
const IMAGE_MODELS = ['gpt-image-1', 'gpt-image-1-mini', 'gpt-image-1.5', 'dall-e-2', 'dall-e-3'];
const SIZES = ['1024x1024', '1536x1024', '1024x1536', 'auto'];
const QUALITIES = ['low', 'medium', 'high', 'auto'];
const FORMATS = ['png', 'jpeg', 'webp'];
const BACKGROUNDS = ['transparent', 'opaque', 'auto'];
const MODERATION = ['low', 'auto'];
/** Output image tokens of gpt-image-1 by quality and size (OpenAI's image generation guide). */
const OUTPUT_TOKENS: Record<string, Record<string, number>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
};

/** A request field as text, for checks and messages (objects as JSON). */
const text = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

let converted: Map<string, Promise<Buffer>> | undefined;

/** The fake's PNG as it is or in another format, read or converted once per process. */
function imageAs(format: string, png: string): Promise<Buffer> {
  converted ??= new Map();
  let made = converted.get(format);
  if (!made) {
    made = (async () => {
      if (format === 'png') return readFile(png);
      const dir = await mkdtemp(join(tmpdir(), 'clipdesk-fake-openai-'));
      try {
        await runFfmpeg(['-i', png, '-frames:v', '1', '-y', join(dir, `out.${format}`)]);
        return await readFile(join(dir, `out.${format}`));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    })();
    converted.set(format, made);
  }
  return made;
}

export async function startOpenAIFake(options: FakeOptions = {}): Promise<RunningFake> {
  const key = options.key ?? 'test-openai-key-0001';
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfter = options.retryAfterSeconds ?? 1;
  const media = await fakeMedia();
  const held = new Set<ServerResponse>();
  let created = 0;

  const fake: RunningFake = {
    baseUrl: '',
    key,
    scenario: options.scenario ?? 'succeed',
    behaviour: behaviourOf(options),
    requests: [],
    submissions: () => created,
    close: async () => {
      for (const res of held) res.destroy();
      await loopback.close();
    },
  };

  /** OpenAI names every answer with an `x-request-id`. */
  const json = (res: ServerResponse, status: number, body: unknown): void =>
    sendJson(res, status, body, { 'x-request-id': `req_${randomUUID().replaceAll('-', '')}` });
  const error = (
    res: ServerResponse,
    status: number,
    message: string,
    type: string,
    param: string | null,
    code: string | null,
  ): void => json(res, status, { error: { message, type, param, code } });

  const validate = (body: Record<string, unknown>): [string, string | null, string] | undefined => {
    const invalid = (param: string, values: string[]): [string, string, string] => [
      `Invalid value: '${text(body[param])}'. Supported values are: ${values.map((v) => `'${v}'`).join(', ')}.`,
      param,
      'invalid_value',
    ];
    if (typeof body['prompt'] !== 'string' || body['prompt'] === '') {
      return ["Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter'];
    }
    const model = body['model'] ?? 'dall-e-2';
    if (!IMAGE_MODELS.includes(text(model))) return invalid('model', IMAGE_MODELS);
    if (text(model).startsWith('gpt-image') && body['response_format'] !== undefined) {
      return ["Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter'];
    }
    const n = body['n'] ?? 1;
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 10) {
      return [`Invalid 'n': integer between 1 and 10 expected.`, 'n', 'invalid_value'];
    }
    const checks: Array<[string, string[]]> = [
      ['size', SIZES],
      ['quality', QUALITIES],
      ['output_format', FORMATS],
      ['background', BACKGROUNDS],
      ['moderation', MODERATION],
    ];
    for (const [param, values] of checks) {
      if (body[param] !== undefined && !values.includes(text(body[param]))) return invalid(param, values);
    }
    return undefined;
  };

  const generate = async (res: ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const problem = validate(body);
    if (problem) return error(res, 400, problem[0], 'invalid_request_error', problem[1], problem[2]);
    created += 1;
    const scenario = fake.scenario;
    if (scenario === 'cancel') {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (scenario === 'slow') await new Promise((resolve) => setTimeout(resolve, pollsBeforeDone * 150));
    if (scenario === 'content_policy') {
      return error(
        res,
        400,
        'Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID req_0123. safety_violations=[violence].',
        'image_generation_user_error',
        null,
        'moderation_blocked',
      );
    }
    if (scenario === 'fail') {
      return error(res, 500, 'Image generation failed. Please try again.', 'server_error', null, null);
    }
    if (scenario === 'malformed') return sendMalformed(res);
    const size = body['size'] === undefined || body['size'] === 'auto' ? '1024x1024' : text(body['size']);
    const quality = body['quality'] === undefined || body['quality'] === 'auto' ? 'high' : text(body['quality']);
    const format = text(body['output_format'] ?? 'png');
    const n = (body['n'] as number | undefined) ?? 1;
    const image = (await imageAs(format, media.image.path)).toString('base64');
    const textTokens = Math.ceil(text(body['prompt']).length / 4);
    const outputTokens = n * (OUTPUT_TOKENS[quality]?.[size] ?? 0);
    json(res, 200, {
      created: Math.floor(Date.now() / 1000),
      background: body['background'] === 'transparent' ? 'transparent' : 'opaque',
      data: scenario === 'no_output' ? [] : Array.from({ length: n }, () => ({ b64_json: image })),
      output_format: format,
      quality,
      size,
      usage: {
        input_tokens: textTokens,
        input_tokens_details: { image_tokens: 0, text_tokens: textTokens },
        output_tokens: outputTokens,
        total_tokens: textTokens + outputTokens,
      },
    });
  };

  const model = (id: string) => ({ id, object: 'model', created: 1745366400, owned_by: 'system' });

  const api = async (req: FakeRequest, res: ServerResponse, path: string): Promise<void> => {
    const body = req.body;
    const presented = /^Bearer (.+)$/.exec(req.headers['authorization'] ?? '')?.[1] ?? '';
    if (presented !== key || fake.scenario === 'unauthorized') {
      return error(
        res,
        401,
        `Incorrect API key provided: ${presented}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        null,
        'invalid_api_key',
      );
    }
    if (fake.scenario === 'rate_limited') {
      res.setHeader('retry-after', String(retryAfter));
      return error(
        res,
        429,
        `Rate limit reached for gpt-image-1 on images per minute (IPM): Limit 5, Used 5, Requested 1. Please try again in ${retryAfter}s.`,
        'requests',
        null,
        'rate_limit_exceeded',
      );
    }
    if (fake.scenario === 'server_error') {
      return error(res, 503, 'The server is overloaded or not ready yet.', 'server_error', null, null);
    }
    const route = new URL(path, 'http://fake').pathname;
    if (req.method === 'POST' && route === '/images/generations') {
      if (!body || typeof body !== 'object') {
        return error(
          res,
          400,
          'We could not parse the JSON body of your request.',
          'invalid_request_error',
          null,
          null,
        );
      }
      return generate(res, body as Record<string, unknown>);
    }
    if (req.method === 'GET' && route === '/models') {
      return json(res, 200, { object: 'list', data: IMAGE_MODELS.map(model) });
    }
    const one = /^\/models\/([^/]+)$/.exec(route);
    if (req.method === 'GET' && one) {
      const id = decodeURIComponent(one[1] ?? '');
      if (!IMAGE_MODELS.includes(id)) {
        return error(res, 404, `The model '${id}' does not exist`, 'invalid_request_error', 'model', 'model_not_found');
      }
      return json(res, 200, model(id));
    }
    error(res, 404, `Invalid URL (${req.method ?? 'GET'} ${API}${route})`, 'invalid_request_error', null, null);
  };

  const loopback = await startLoopback((req, res) => {
    if (req.path.startsWith(`${API}/`)) return api(req, res, req.path.slice(API.length));
    error(res, 404, `Invalid URL (${req.method} ${req.path})`, 'invalid_request_error', null, null);
  });
  fake.baseUrl = `${loopback.baseUrl}${API}`;
  fake.requests = loopback.requests;
  return fake;
}
