import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { behaviourOf, problemText, rateLimitedPoll, schemaRefusal } from './behaviour.ts';
import { shippedInputPaths } from '../../../server/providers/remote/input-schemas.ts';
import { FAL_LISTING } from './listings.ts';
import { deliver, sendJson, sendMalformed, startLoopback } from './loopback.ts';
import type { FakeRequest } from './loopback.ts';
import { fakeMedia, serveFile } from './media.ts';
import type { FakeOptions, FakeScenario, RunningFake } from './types.ts';

/**
 * A contract fake of fal's queue API, storage upload and webhooks, on one loopback origin (the
 * adapter's request middleware moves queue.fal.run and rest.fal.ai onto it):
 * - `POST /{model path}[?fal_webhook=URL]` → `{request_id, response_url, status_url, cancel_url, queue_position}`;
 * - `GET /{owner}/{alias}/requests/{id}/status` → IN_QUEUE (queue_position) → IN_PROGRESS → COMPLETED;
 * - `GET /{owner}/{alias}/requests/{id}` → the result: `{video: {url, …}}` or `{images: [{url, …}], has_nsfw_concepts}`,
 *   or the job's error (422 `{detail: [{loc, msg, type: 'content_policy_violation', url}]}`,
 *   500 `{detail, error_type}`, 499 `client_cancelled` after a cancel), 400 while not completed;
 * - `PUT /{owner}/{alias}/requests/{id}/cancel` → 202 `CANCELLATION_REQUESTED`, or 400 `ALREADY_COMPLETED`;
 * - `POST /storage/upload/initiate?storage_type=fal-cdn-v3` → `{upload_url, file_url}`, then `PUT upload_url`;
 * - every API call needs `Authorization: Key <key>` (401 otherwise); unknown request ids answer 404;
 * - a submit to an endpoint fal does not list (no shipped schema, not in the listing) answers 404;
 *   an input the endpoint's schema refuses answers 422 `{detail: [{loc, msg, type, input, ctx}]}`;
 * - behaviours (types.ts): rate-limited status polls and result fetches, expired output URLs.
 * A job with a webhook moves on its own (one step per 10 ms) and is POSTed as
 * `{request_id, gateway_request_id, status: 'OK' | 'ERROR', payload, error}` when it completes,
 * signed as fal signs them: `x-fal-webhook-request-id`, `-user-id`, `-timestamp` and `-signature`,
 * the hex ED25519 signature of `request id \n user id \n timestamp \n hex(sha256(body))` by a key
 * published at `GET /.well-known/jwks.json` (`jwksUrl`; OKP / Ed25519, `x` base64url).
 */

const RATE_LIMITED = { detail: 'Rate limit exceeded' };

const SHIPPED_ENDPOINTS = new Set(shippedInputPaths('fal'));

/** An endpoint fal lists: one whose schema ships with the catalog, or one of the fake's listing. */
function knownEndpoint(path: string): boolean {
  return SHIPPED_ENDPOINTS.has(path) || FAL_LISTING.some((entry) => entry.id === path);
}

interface Job {
  id: string;
  path: string;
  app: string;
  scenario: FakeScenario;
  steps: number;
  canceled: boolean;
  webhook?: string;
  delivered: boolean;
}

/** The fal account the fake's deliveries name (x-fal-webhook-user-id). */
export const FAL_FAKE_USER_ID = 'fake-user-0001';

/** fal's webhook headers for `body`, signed with `key` at `timestampSeconds`. */
export function falWebhookHeaders(
  key: KeyObject,
  requestId: string,
  body: string,
  timestampSeconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const timestamp = String(timestampSeconds);
  const digest = createHash('sha256').update(body).digest('hex');
  const message = Buffer.from(`${requestId}\n${FAL_FAKE_USER_ID}\n${timestamp}\n${digest}`);
  return {
    'x-fal-webhook-request-id': requestId,
    'x-fal-webhook-user-id': FAL_FAKE_USER_ID,
    'x-fal-webhook-timestamp': timestamp,
    'x-fal-webhook-signature': sign(null, message, key).toString('hex'),
  };
}

export interface FalFake extends RunningFake {
  /** Where the fake publishes its webhook signing key (CLIPDESK_FAL_JWKS_URL). */
  jwksUrl: string;
  /** The fake's webhook signing key. */
  signingKey: KeyObject;
  /** Bytes uploaded to fal storage, by the file URL handed back. */
  uploads: Map<string, { mime: string; bytes: Buffer }>;
  /** Inputs of submitted jobs, by request id. */
  inputs: Map<string, unknown>;
}

export async function startFalFake(options: FakeOptions = {}): Promise<FalFake> {
  const media = await fakeMedia();
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfter = options.retryAfterSeconds ?? 1;
  const jobs = new Map<string, Job>();
  const pendingUploads = new Map<string, { fileUrl: string; mime: string }>();
  const uploads = new Map<string, { mime: string; bytes: Buffer }>();
  const inputs = new Map<string, unknown>();
  const timers = new Set<NodeJS.Timeout>();
  const signing = generateKeyPairSync('ed25519');
  let created = 0;

  const phase = (job: Job): 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' => {
    if (job.canceled) return 'COMPLETED';
    if (job.steps <= Math.ceil(pollsBeforeDone / 2) && pollsBeforeDone > 0) return 'IN_QUEUE';
    if (job.scenario === 'slow' || job.steps <= pollsBeforeDone) return 'IN_PROGRESS';
    return 'COMPLETED';
  };

  const urls = (job: Job) => {
    const base = `${fake.baseUrl}/${job.app}/requests/${job.id}`;
    return { request_id: job.id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
  };

  /** What `GET …/requests/{id}` answers for a completed job: status and body (undefined: malformed). */
  const outcome = (job: Job): { status: number; body?: unknown; headers?: Record<string, string> } => {
    if (job.canceled || job.scenario === 'cancel') {
      const body = { detail: 'Request was cancelled by the client', error_type: 'client_cancelled' };
      return { status: 499, body, headers: { 'x-fal-error-type': 'client_cancelled' } };
    }
    const image = job.path.includes('flux');
    switch (job.scenario) {
      case 'fail':
        return {
          status: 500,
          body: { detail: 'The runner encountered an internal server error', error_type: 'runner_server_error' },
          headers: { 'x-fal-error-type': 'runner_server_error' },
        };
      case 'content_policy':
        if (image) return { status: 200, body: imagesResult(true) };
        return {
          status: 422,
          body: {
            detail: [
              {
                loc: ['body', 'prompt'],
                msg: 'The content could not be processed because it contained material flagged by a content checker.',
                type: 'content_policy_violation',
                url: 'https://docs.fal.ai/errors#content_policy_violation',
              },
            ],
          },
          headers: { 'x-fal-retryable': 'false' },
        };
      case 'no_output':
        return { status: 200, body: { seed: 42 } };
      case 'malformed':
        return { status: 200 };
      default:
        return { status: 200, body: image ? imagesResult(false) : videoResult() };
    }
  };

  const videoResult = () => ({
    video: {
      url: `${fake.baseUrl}/fake-outputs/output.mp4`,
      content_type: 'video/mp4',
      file_name: 'output.mp4',
      file_size: media.video.bytes,
    },
  });
  const imagesResult = (flagged: boolean) => ({
    images: [{ url: `${fake.baseUrl}/fake-outputs/output.png`, width: 640, height: 360, content_type: 'image/png' }],
    seed: 42,
    has_nsfw_concepts: [flagged],
    prompt: 'fake',
    timings: { inference: 0.1 },
  });

  /** A failed request's status also says why (`error`, `error_type`), beside the result's error. */
  const failure = (job: Job): Record<string, unknown> => {
    const out = outcome(job);
    if (out.status === 200) return {};
    const body = out.body as { detail?: unknown; error_type?: unknown };
    return {
      error: typeof body.detail === 'string' ? body.detail : 'Unprocessable Entity',
      ...(typeof body.error_type === 'string' ? { error_type: body.error_type } : {}),
    };
  };

  const sendOutcome = (res: ServerResponse, job: Job) => {
    const out = outcome(job);
    if (out.body === undefined) sendMalformed(res);
    else sendJson(res, out.status, out.body, { 'x-fal-request-id': job.id, ...(out.headers ?? {}) });
  };

  const deliverWebhook = (job: Job) => {
    if (!job.webhook || job.delivered || phase(job) !== 'COMPLETED') return;
    job.delivered = true;
    const out = outcome(job);
    const ok = out.status === 200 && out.body !== undefined;
    const body = {
      request_id: job.id,
      gateway_request_id: job.id,
      status: ok ? 'OK' : 'ERROR',
      payload: out.body ?? null,
      ...(ok ? {} : { error: `Invalid status code: ${out.status}` }),
    };
    const text = JSON.stringify(body);
    void deliver(job.webhook, text, falWebhookHeaders(signing.privateKey, job.id, text));
  };

  /** A job with a webhook is not polled: it moves on by itself. */
  const drive = (job: Job) => {
    const timer = setInterval(() => {
      if (phase(job) === 'COMPLETED') {
        clearInterval(timer);
        timers.delete(timer);
        deliverWebhook(job);
        return;
      }
      job.steps += 1;
    }, 10);
    timers.add(timer);
  };

  const handle = async (req: FakeRequest, res: ServerResponse, http: IncomingMessage) => {
    const url = new URL(req.path, fake.baseUrl);
    const path = url.pathname;

    if (req.method === 'GET' && path === '/.well-known/jwks.json') {
      const jwk = signing.publicKey.export({ format: 'jwk' });
      return sendJson(res, 200, { keys: [{ ...jwk, kid: 'fake-key-1', use: 'sig', alg: 'EdDSA' }] });
    }
    // Files: outputs and uploaded objects are public (signed) URLs on the real service, not the API.
    if (req.method === 'GET' && path.startsWith('/fake-outputs/') && fake.behaviour.expiredOutputs) {
      return sendJson(res, 404, { detail: 'File not found' });
    }
    if (req.method === 'GET' && path === '/fake-outputs/output.mp4') return serveFile(http, res, media.video);
    if (req.method === 'GET' && path === '/fake-outputs/output.png') return serveFile(http, res, media.image);
    if (req.method === 'PUT' && path.startsWith('/fake-storage/put/')) {
      const pending = pendingUploads.get(path.slice('/fake-storage/put/'.length));
      if (!pending) return sendJson(res, 404, { detail: 'Unknown upload' });
      uploads.set(pending.fileUrl, { mime: req.headers['content-type'] ?? pending.mime, bytes: req.raw });
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'GET' && path.startsWith('/fake-storage/files/')) {
      const file = uploads.get(`${fake.baseUrl}${path}`);
      if (!file) return sendJson(res, 404, { detail: 'Not found' });
      res.writeHead(200, { 'content-type': file.mime, 'content-length': file.bytes.length }).end(file.bytes);
      return;
    }

    if (fake.scenario === 'unauthorized' || req.headers.authorization !== `Key ${fake.key}`) {
      return sendJson(res, 401, { detail: 'Invalid Key Authorization header' });
    }

    if (req.method === 'POST' && path === '/storage/upload/initiate') {
      const body = (req.body ?? {}) as { content_type?: string; file_name?: string };
      if (!body.content_type || !body.file_name)
        return sendJson(res, 422, { detail: 'content_type and file_name are required' });
      const token = randomUUID();
      const fileUrl = `${fake.baseUrl}/fake-storage/files/${token}/${encodeURIComponent(body.file_name)}`;
      pendingUploads.set(token, { fileUrl, mime: body.content_type });
      return sendJson(res, 200, { upload_url: `${fake.baseUrl}/fake-storage/put/${token}`, file_url: fileUrl });
    }

    const request = /^\/([^/]+\/[^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
    if (request) {
      const [, app, id, action] = request;
      const job = jobs.get(id!);
      if (!job || job.app !== app) return sendJson(res, 404, { detail: `Request ${id} not found` });
      if (req.method === 'GET' && action !== '/cancel' && rateLimitedPoll(fake.behaviour, res, RATE_LIMITED)) return;
      if (req.method === 'GET' && action === '/status') {
        if (!job.webhook && phase(job) !== 'COMPLETED') job.steps += 1;
        const now = phase(job);
        const body = {
          status: now,
          ...urls(job),
          ...(now === 'IN_QUEUE' ? { queue_position: Math.max(0, Math.ceil(pollsBeforeDone / 2) - job.steps) } : {}),
          ...(now === 'IN_QUEUE' ? {} : { logs: [] }),
          ...(now === 'COMPLETED' ? { metrics: { inference_time: 1.5 }, ...failure(job) } : {}),
        };
        return sendJson(res, 200, body);
      }
      if (req.method === 'GET' && action === undefined) {
        if (phase(job) !== 'COMPLETED') return sendJson(res, 400, { detail: 'Request is still in progress' });
        return sendOutcome(res, job);
      }
      if (req.method === 'PUT' && action === '/cancel') {
        if (phase(job) === 'COMPLETED') return sendJson(res, 400, { status: 'ALREADY_COMPLETED' });
        job.canceled = true;
        deliverWebhook(job);
        return sendJson(res, 202, { status: 'CANCELLATION_REQUESTED' });
      }
      return sendJson(res, 405, { detail: 'Method Not Allowed' });
    }

    if (req.method === 'POST') {
      if (fake.scenario === 'rate_limited') {
        return sendJson(res, 429, { detail: 'Rate limit exceeded' }, { 'retry-after': String(retryAfter) });
      }
      if (fake.scenario === 'server_error') {
        return sendJson(res, 500, { detail: 'Internal Server Error', error_type: 'internal_error' });
      }
      if (req.body === undefined || typeof req.body !== 'object') {
        return sendJson(res, 422, {
          detail: [{ loc: ['body'], msg: 'Input should be an object', type: 'value_error' }],
        });
      }
      const prompt = (req.body as { prompt?: unknown }).prompt;
      if (typeof prompt !== 'string' || !prompt) {
        const detail = [{ loc: ['body', 'prompt'], msg: 'Field required', type: 'missing' }];
        return sendJson(res, 422, { detail });
      }
      const modelPath = path.slice(1);
      const segments = modelPath.split('/');
      if (segments.length < 2 || !knownEndpoint(modelPath)) return sendJson(res, 404, { detail: 'Not Found' });
      const refused = schemaRefusal('fal', modelPath, req.body);
      if (refused) {
        const detail = refused.map((p) => ({
          loc: ['body', ...p.field.split('.')],
          msg: problemText(p),
          type: p.allowed ? 'literal_error' : p.value === undefined ? 'missing' : 'value_error',
          ...(p.value === undefined ? {} : { input: p.value }),
          ...(p.allowed ? { ctx: { expected: p.allowed.map((v) => `'${String(v)}'`).join(' or ') } } : {}),
        }));
        return sendJson(res, 422, { detail });
      }
      const job: Job = {
        id: randomUUID(),
        path: modelPath,
        app: `${segments[0]}/${segments[1]}`,
        scenario: fake.scenario,
        steps: 0,
        canceled: false,
        delivered: false,
      };
      const webhook = url.searchParams.get('fal_webhook');
      if (webhook) job.webhook = webhook;
      jobs.set(job.id, job);
      inputs.set(job.id, req.body);
      created += 1;
      if (job.webhook) drive(job);
      return sendJson(res, 200, { status: 'IN_QUEUE', ...urls(job), queue_position: Math.ceil(pollsBeforeDone / 2) });
    }
    return sendJson(res, 404, { detail: 'Not Found' });
  };

  const server = await startLoopback(handle);
  const fake: FalFake = {
    baseUrl: server.baseUrl,
    jwksUrl: `${server.baseUrl}/.well-known/jwks.json`,
    signingKey: signing.privateKey,
    key: options.key ?? 'test-fal-key-0001',
    scenario: options.scenario ?? 'succeed',
    behaviour: behaviourOf(options),
    requests: server.requests,
    uploads,
    inputs,
    submissions: () => created,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      await server.close();
    },
  };
  return fake;
}
