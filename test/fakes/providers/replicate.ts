import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { shippedInputSchema } from '../../../server/providers/remote/input-schemas.ts';
import { behaviourOf, problemText, rateLimitedPoll, schemaRefusal } from './behaviour.ts';
import { deliver, sendJson, sendMalformed, startLoopback } from './loopback.ts';
import type { FakeRequest } from './loopback.ts';
import { REPLICATE_COLLECTIONS, replicateModel } from './listings.ts';
import { fakeMedia, serveFile } from './media.ts';
import type { FakeOptions, FakeScenario, RunningFake } from './types.ts';

/**
 * A contract fake of Replicate's HTTP API (base URL `http://127.0.0.1:PORT/v1`, as the SDK's
 * `baseUrl` includes the version):
 * - `POST /v1/models/{owner}/{name}/predictions` `{input, webhook?, webhook_events_filter?}` → 201, status `starting`;
 * - `GET /v1/predictions/{id}` → starting → processing → succeeded (`output`: a URL, or a list of
 *   them for FLUX dev/schnell) | failed (`error`) | canceled;
 * - `POST /v1/predictions/{id}/cancel` → 200 with the prediction;
 * - `POST /v1/files` (multipart `content`, `metadata`) → 201 `{id, urls: {get}, …}`;
 * - `GET /v1/account`; `GET /v1/webhooks/default/secret` → `{key: 'whsec_…'}`;
 * - `GET /v1/collections/{slug}` (text-to-video, image-to-video, text-to-image) → `{name, slug,
 *   description, models: [model objects with latest_version.openapi_schema]}` (listings.ts);
 * - `GET /v1/models/{owner}/{name}` → the model with `latest_version.openapi_schema` (its Input from
 *   the shipped schema, or `versionInputs` when a test stands in an older version);
 * - `Authorization: Bearer <key>` (or `Token <key>`); errors are problem details
 *   (`application/problem+json`, `{title, detail, status}`), 429 with `Retry-After`; an input the
 *   model's schema refuses answers 422 with `invalid_fields`;
 * - behaviours (types.ts): rate-limited polls, expired outputs; the `aborted` scenario ends a
 *   prediction `aborted`.
 * A prediction with a webhook moves on its own (one step per 10 ms) and, when it is over, its final
 * state is POSTed signed the Standard Webhooks way (webhook-id, webhook-timestamp,
 * webhook-signature `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`).
 */

interface Prediction {
  id: string;
  model: string;
  input: unknown;
  scenario: FakeScenario;
  steps: number;
  canceled: boolean;
  createdAt: string;
  webhook?: string;
  filter?: string[];
  delivered: boolean;
}

export interface ReplicateFake extends RunningFake {
  /** The account's webhook signing secret (`whsec_…`). */
  webhookSecret: string;
  /** Files uploaded through the files API, by their `urls.get`. */
  uploads: Map<string, { mime: string; bytes: Buffer }>;
  /** Inputs of created predictions, by id. */
  inputs: Map<string, unknown>;
  /** A model's latest version's Input properties, in place of the shipped schema's (an older version). */
  versionInputs: Map<string, Record<string, unknown>>;
}

const problem = (
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
) => {
  const text = JSON.stringify({ title, detail, status });
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
};

/** A model as `GET /v1/models/{owner}/{name}` answers it, its latest version's Input given. */
function versionedModel(id: string, properties: Record<string, unknown>): Record<string, unknown> {
  const [owner, name] = id.split('/');
  return {
    url: `https://replicate.com/${id}`,
    owner,
    name,
    visibility: 'public',
    latest_version: {
      id: createHash('sha256')
        .update(`${id}\n${JSON.stringify(properties)}`)
        .digest('hex'),
      created_at: '2025-07-01T12:00:00.000000Z',
      openapi_schema: {
        openapi: '3.0.2',
        components: { schemas: { Input: { type: 'object', title: 'Input', properties } } },
      },
    },
  };
}

export async function startReplicateFake(options: FakeOptions = {}): Promise<ReplicateFake> {
  const media = await fakeMedia();
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfter = options.retryAfterSeconds ?? 1;
  const predictions = new Map<string, Prediction>();
  const uploads = new Map<string, { mime: string; bytes: Buffer }>();
  const inputs = new Map<string, unknown>();
  const timers = new Set<NodeJS.Timeout>();
  let created = 0;
  let origin = '';

  const status = (p: Prediction): string => {
    if (p.canceled) return 'canceled';
    if (p.steps <= Math.ceil(pollsBeforeDone / 2) && pollsBeforeDone > 0) return 'starting';
    if (p.scenario === 'slow' || p.steps <= pollsBeforeDone) return 'processing';
    switch (p.scenario) {
      case 'fail':
        return 'failed';
      case 'content_policy':
        return 'failed';
      case 'cancel':
        return 'canceled';
      case 'aborted':
        return 'aborted';
      default:
        return 'succeeded';
    }
  };
  const over = (p: Prediction) => ['succeeded', 'failed', 'canceled', 'aborted'].includes(status(p));

  const output = (p: Prediction): unknown => {
    if (p.scenario === 'no_output') return null;
    if (p.model.startsWith('black-forest-labs/')) {
      const url = `${origin}/fake-outputs/output.png`;
      return p.model === 'black-forest-labs/flux-1.1-pro' ? url : [url];
    }
    return `${origin}/fake-outputs/output.mp4`;
  };

  const view = (p: Prediction) => {
    const now = status(p);
    const error =
      now !== 'failed'
        ? null
        : p.scenario === 'content_policy'
          ? 'The input or output was flagged as sensitive. Please try again with different inputs. (E005)'
          : 'Prediction failed: the model raised an exception';
    return {
      id: p.id,
      model: p.model,
      version: 'hidden',
      input: p.input,
      logs: '',
      output: now === 'succeeded' ? output(p) : null,
      data_removed: false,
      error,
      status: now,
      source: 'api',
      created_at: p.createdAt,
      ...(now === 'starting' ? {} : { started_at: p.createdAt }),
      ...(over(p) ? { completed_at: new Date().toISOString(), metrics: { predict_time: 1.5, total_time: 2 } } : {}),
      urls: {
        cancel: `${origin}/v1/predictions/${p.id}/cancel`,
        get: `${origin}/v1/predictions/${p.id}`,
        stream: `${origin}/v1/predictions/${p.id}/stream`,
        web: `https://replicate.com/p/${p.id}`,
      },
    };
  };

  const sign = (id: string, timestamp: string, body: string): string => {
    const key = Buffer.from(fake.webhookSecret.slice('whsec_'.length), 'base64');
    return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  };

  const deliverWebhook = (p: Prediction) => {
    if (!p.webhook || p.delivered || !over(p)) return;
    if (p.filter && !p.filter.includes('completed')) return;
    p.delivered = true;
    const body = JSON.stringify(view(p));
    const id = `msg_${randomBytes(12).toString('hex')}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    void deliver(p.webhook, body, {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': sign(id, timestamp, body),
    });
  };

  const drive = (p: Prediction) => {
    const timer = setInterval(() => {
      if (over(p)) {
        clearInterval(timer);
        timers.delete(timer);
        deliverWebhook(p);
        return;
      }
      p.steps += 1;
    }, 10);
    timers.add(timer);
  };

  const handle = async (req: FakeRequest, res: ServerResponse, http: IncomingMessage) => {
    const path = new URL(req.path, origin).pathname;
    if (req.method === 'GET' && path.startsWith('/fake-outputs/') && fake.behaviour.expiredOutputs) {
      return problem(res, 404, 'Not found', 'The requested resource could not be found.');
    }
    if (req.method === 'GET' && path === '/fake-outputs/output.mp4') return serveFile(http, res, media.video);
    if (req.method === 'GET' && path === '/fake-outputs/output.png') return serveFile(http, res, media.image);

    const auth = req.headers.authorization ?? '';
    if (fake.scenario === 'unauthorized' || (auth !== `Bearer ${fake.key}` && auth !== `Token ${fake.key}`)) {
      return problem(res, 401, 'Unauthenticated', 'You did not pass a valid authentication token');
    }

    const collection = /^\/v1\/collections\/([a-z0-9-]+)$/.exec(path);
    if (req.method === 'GET' && collection) {
      const models = REPLICATE_COLLECTIONS[collection[1]!];
      if (!models) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      return sendJson(res, 200, {
        name: collection[1]!.replace(/-/g, ' '),
        slug: collection[1],
        description: `Models for ${collection[1]!.replace(/-/g, ' ')}`,
        models: models.map(replicateModel),
      });
    }
    const model = /^\/v1\/models\/([^/]+\/[^/]+)$/.exec(path);
    if (req.method === 'GET' && model) {
      const properties =
        fake.versionInputs.get(model[1]!) ??
        (shippedInputSchema('replicate', model[1]!)?.schema as { properties?: Record<string, unknown> } | undefined)
          ?.properties;
      if (!properties) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      return sendJson(res, 200, versionedModel(model[1]!, properties));
    }
    if (req.method === 'GET' && path === '/v1/account') {
      return sendJson(res, 200, { type: 'user', username: 'fake-user', name: 'Fake User', github_url: null });
    }
    if (req.method === 'GET' && path === '/v1/webhooks/default/secret') {
      return sendJson(res, 200, { key: fake.webhookSecret });
    }
    if (req.method === 'POST' && path === '/v1/files') {
      const form = await new Response(new Uint8Array(req.raw), {
        headers: { 'content-type': req.headers['content-type'] ?? '' },
      })
        .formData()
        .catch(() => undefined);
      const content = form?.get('content');
      if (!content || typeof content === 'string') {
        return problem(res, 400, 'Bad Request', 'A multipart field named content is required');
      }
      const bytes = Buffer.from(await content.arrayBuffer());
      const id = randomBytes(12).toString('hex');
      const url = `${origin}/v1/files/${id}`;
      uploads.set(url, { mime: content.type, bytes });
      const now = new Date();
      return sendJson(res, 201, {
        id,
        name: content.name,
        content_type: content.type,
        size: bytes.length,
        etag: createHash('md5').update(bytes).digest('hex'),
        checksums: { sha256: createHash('sha256').update(bytes).digest('hex') },
        metadata: {},
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + 24 * 3600 * 1000).toISOString(),
        urls: { get: url },
      });
    }

    const create = /^\/v1\/models\/([^/]+\/[^/]+)\/predictions$/.exec(path);
    if (req.method === 'POST' && create) {
      if (fake.scenario === 'rate_limited') {
        return problem(
          res,
          429,
          'Request was throttled',
          `Request was throttled. Expected available in ${retryAfter} seconds.`,
          {
            'retry-after': String(retryAfter),
          },
        );
      }
      if (fake.scenario === 'server_error') return problem(res, 500, 'Internal Server Error', 'Something went wrong');
      const body = (req.body ?? {}) as { input?: unknown; webhook?: unknown; webhook_events_filter?: unknown };
      if (typeof body.input !== 'object' || body.input === null) {
        return sendJson(res, 422, {
          title: 'Input validation failed',
          detail: '- input: input is required',
          status: 422,
          invalid_fields: [{ type: 'required', field: 'input', description: 'input is required' }],
        });
      }
      const prompt = (body.input as { prompt?: unknown }).prompt;
      if (typeof prompt !== 'string' || !prompt) {
        return sendJson(res, 422, {
          title: 'Input validation failed',
          detail: '- input.prompt: String length must be greater than or equal to 1',
          status: 422,
          invalid_fields: [
            {
              type: 'min_length',
              field: 'input.prompt',
              description: 'String length must be greater than or equal to 1',
            },
          ],
        });
      }
      const refused = schemaRefusal('replicate', create[1]!, body.input);
      if (refused) {
        const fields = refused.map((f) => ({
          type: f.allowed ? 'enum' : f.value === undefined ? 'required' : 'invalid',
          field: `input.${f.field}`,
          description: problemText(f),
        }));
        return sendJson(res, 422, {
          title: 'Input validation failed',
          detail: fields.map((f) => `- ${f.field}: ${f.description}`).join('\n'),
          status: 422,
          invalid_fields: fields,
        });
      }
      const p: Prediction = {
        id: randomBytes(13).toString('hex').slice(0, 26),
        model: create[1]!,
        input: body.input,
        scenario: fake.scenario,
        steps: 0,
        canceled: false,
        createdAt: new Date().toISOString(),
        delivered: false,
      };
      if (typeof body.webhook === 'string') p.webhook = body.webhook;
      if (Array.isArray(body.webhook_events_filter)) p.filter = body.webhook_events_filter as string[];
      predictions.set(p.id, p);
      inputs.set(p.id, body.input);
      created += 1;
      if (p.webhook) drive(p);
      return sendJson(res, 201, view(p));
    }

    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
    if (one) {
      const p = predictions.get(one[1]!);
      if (!p) return problem(res, 404, 'Not found', 'The requested resource could not be found.');
      if (req.method === 'GET' && !one[2]) {
        const throttled = { title: 'Request was throttled', detail: 'Request was throttled.', status: 429 };
        if (rateLimitedPoll(fake.behaviour, res, throttled)) return;
        if (!p.webhook && !over(p)) p.steps += 1;
        if (over(p) && p.scenario === 'malformed') return sendMalformed(res);
        return sendJson(res, 200, view(p));
      }
      if (req.method === 'POST' && one[2]) {
        if (!over(p)) p.canceled = true;
        deliverWebhook(p);
        return sendJson(res, 200, view(p));
      }
      return problem(res, 405, 'Method Not Allowed', `${req.method} is not allowed here`);
    }
    return problem(res, 404, 'Not found', 'The requested resource could not be found.');
  };

  const server = await startLoopback(handle);
  origin = server.baseUrl;
  const fake: ReplicateFake = {
    baseUrl: `${server.baseUrl}/v1`,
    key: options.key ?? 'test-replicate-key-0001',
    scenario: options.scenario ?? 'succeed',
    behaviour: behaviourOf(options),
    requests: server.requests,
    versionInputs: new Map(),
    webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
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
