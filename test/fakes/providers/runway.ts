import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { behaviourOf, problemText, rateLimitedPoll, schemaRefusal } from './behaviour.ts';
import { startLoopback } from './loopback.ts';
import { fakeMedia, serveFile } from './media.ts';
import type { FakeOptions, FakeScenario, RunningFake } from './types.ts';

/**
 * A contract fake of Runway's developer API, as docs.dev.runwayml.com describes it:
 * - `GET /v1/organization` — the organization's tier and credit balance (the adapter's key test);
 * - `POST /v1/image_to_video` with `{model, promptImage, promptText?, ratio, duration?, seed?}`
 *   → `{id}`; Gen-4 Turbo takes only a start image, as an HTTPS URL or a data URI of up to 5 MB;
 * - `GET /v1/tasks/{id}` → `{id, status, createdAt, …}` through PENDING (THROTTLED when two other
 *   tasks are still unfinished, the organization's concurrency limit) and RUNNING (`progress`)
 *   to SUCCEEDED (`output: [url]`, `cost.credits`), FAILED (`failure`, `failureCode`) or CANCELLED;
 * - `DELETE /v1/tasks/{id}` → 204: cancels (or deletes) the task, which cannot be fetched again;
 * - `GET /outputs/{id}.mp4` — the output, at an unguessable URL that needs no key (a signed URL).
 *
 * Every API call needs `Authorization: Bearer <key>` (401 otherwise) and an `X-Runway-Version`
 * (400 otherwise). Errors are `{error: "…"}`, with `issues` when the body failed validation.
 *
 * Scenarios, taken by each task when it is created: `unauthorized` refuses every API call with
 * 401; `rate_limited` (429 with Retry-After), `server_error` (502) and `malformed` (a 200 that is
 * not JSON) answer the create; `fail` ends FAILED with INTERNAL.BAD_OUTPUT.CODE01, `cancel` ends
 * CANCELLED, `content_policy` ends FAILED with SAFETY.INPUT.TEXT, `no_output` ends SUCCEEDED with
 * an empty `output`, and `slow` stays RUNNING.
 */

interface Task {
  id: string;
  scenario: FakeScenario;
  polls: number;
  createdAt: string;
  credits: number;
  /** Created while the organization was at its concurrency limit: THROTTLED before it runs. */
  throttled: boolean;
  finished: boolean;
}

const VERSION = '2024-11-06';
const RATIOS = ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'];
const MAX_DATA_URI = 5 * 1000 * 1000;
/** The organization's concurrency limit for gen4_turbo (as `GET /v1/organization` reports it). */
const MAX_CONCURRENT = 2;

export async function startRunwayFake(options: FakeOptions = {}): Promise<RunningFake> {
  const media = await fakeMedia();
  const key = options.key ?? 'test-runway-key-0001';
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const tasks = new Map<string, Task>();
  const outputs = new Set<string>();
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

  function json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  }

  function create(res: ServerResponse, body: unknown): void {
    const scenario = fake.scenario;
    if (scenario === 'rate_limited') {
      res.setHeader('retry-after', String(retryAfterSeconds));
      json(res, 429, { error: 'You have exceeded the rate limit for this endpoint.' });
      return;
    }
    if (scenario === 'server_error') {
      json(res, 502, { error: 'An unexpected error occurred.' });
      return;
    }
    const refused = schemaRefusal('runway', isRecord(body) ? String(body['model']) : '', body) ?? [];
    const issues = [...validate(body), ...refused.map((p) => ({ path: p.field.split('.'), message: problemText(p) }))];
    if (issues.length > 0) {
      json(res, 400, { error: 'Validation of body failed', issues });
      return;
    }
    if (scenario === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"id": "');
      return;
    }
    created += 1;
    const id = randomUUID();
    const duration = isRecord(body) && typeof body['duration'] === 'number' ? body['duration'] : 10;
    const active = [...tasks.values()].filter((t) => !t.finished).length;
    tasks.set(id, {
      id,
      scenario,
      polls: 0,
      createdAt: new Date().toISOString(),
      credits: 5 * duration,
      throttled: active >= MAX_CONCURRENT,
      finished: false,
    });
    json(res, 200, { id });
  }

  function validate(body: unknown): Array<{ path: string[]; message: string }> {
    if (!isRecord(body)) return [{ path: [], message: 'Expected object' }];
    const issues: Array<{ path: string[]; message: string }> = [];
    if (body['model'] !== 'gen4_turbo') issues.push({ path: ['model'], message: 'Invalid enum value' });
    const image = body['promptImage'];
    if (typeof image !== 'string') issues.push({ path: ['promptImage'], message: 'Required' });
    else if (image.startsWith('data:')) {
      if (!/^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+=*$/.test(image))
        issues.push({ path: ['promptImage'], message: 'Invalid data URI' });
      else if (image.length > MAX_DATA_URI)
        issues.push({ path: ['promptImage'], message: 'Data URI exceeds the 5MB limit' });
    } else if (!image.startsWith('https://') && !image.startsWith('runway://'))
      issues.push({ path: ['promptImage'], message: 'Must be an HTTPS URL, a Runway upload URI or a data URI' });
    if (typeof body['ratio'] !== 'string' || !RATIOS.includes(body['ratio']))
      issues.push({ path: ['ratio'], message: 'Invalid enum value' });
    const duration = body['duration'];
    if (
      duration !== undefined &&
      (!Number.isInteger(duration) || (duration as number) < 2 || (duration as number) > 10)
    )
      issues.push({ path: ['duration'], message: 'Number must be an integer from 2 to 10' });
    const text = body['promptText'];
    if (text !== undefined && (typeof text !== 'string' || text.length === 0 || text.length > 1000))
      issues.push({ path: ['promptText'], message: 'String must contain between 1 and 1000 characters' });
    return issues;
  }

  function retrieve(res: ServerResponse, id: string): void {
    if (rateLimitedPoll(fake.behaviour, res, { error: 'You have exceeded the rate limit for this endpoint.' })) return;
    const task = tasks.get(id);
    if (!task) {
      json(res, 404, { error: 'Task not found.' });
      return;
    }
    task.polls += 1;
    const base = { id: task.id, createdAt: task.createdAt };
    const estimatedCost = { credits: task.credits };
    if (task.polls === 1 && pollsBeforeDone > 0) {
      json(res, 200, { ...base, status: task.throttled ? 'THROTTLED' : 'PENDING', estimatedCost });
      return;
    }
    if (task.scenario === 'slow' || task.polls <= pollsBeforeDone) {
      json(res, 200, { ...base, status: 'RUNNING', progress: task.polls / (pollsBeforeDone + 1), estimatedCost });
      return;
    }
    task.finished = true;
    switch (task.scenario) {
      case 'fail':
        json(res, 200, {
          ...base,
          status: 'FAILED',
          failure: 'The generation was rejected by our quality checks.',
          failureCode: 'INTERNAL.BAD_OUTPUT.CODE01',
          cost: { credits: 0 },
        });
        return;
      case 'content_policy':
        json(res, 200, {
          ...base,
          status: 'FAILED',
          failure: 'Your prompt text did not pass our content moderation.',
          failureCode: 'SAFETY.INPUT.TEXT',
          cost: { credits: 0 },
        });
        return;
      case 'cancel':
        json(res, 200, { ...base, status: 'CANCELLED', cost: { credits: 0 } });
        return;
      case 'no_output':
        json(res, 200, { ...base, status: 'SUCCEEDED', output: [], cost: { credits: task.credits } });
        return;
      default: {
        outputs.add(task.id);
        json(res, 200, {
          ...base,
          status: 'SUCCEEDED',
          output: [`${fake.baseUrl}/outputs/${task.id}.mp4`],
          cost: { credits: task.credits },
        });
      }
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const output = /^\/outputs\/([0-9a-f-]+)\.mp4$/.exec(path);
    if (output && (req.method === 'GET' || req.method === 'HEAD')) {
      // A signed output URL past its expiry: the storage answers 403.
      if (fake.behaviour.expiredOutputs) res.writeHead(403).end('Request has expired');
      else if (outputs.has(output[1]!)) await serveFile(req, res, media.video);
      else res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${key}` || fake.scenario === 'unauthorized') {
      json(res, 401, { error: 'Incorrect API key provided, or the key has been revoked.' });
      return;
    }
    if (!req.headers['x-runway-version']) {
      json(res, 400, { error: 'The X-Runway-Version header is required.' });
      return;
    }
    if (req.headers['x-runway-version'] !== VERSION) {
      json(res, 400, { error: `Unsupported API version: ${String(req.headers['x-runway-version'])}` });
      return;
    }
    if (req.method === 'GET' && path === '/v1/organization') {
      json(res, 200, {
        creditBalance: 1000,
        tier: {
          maxMonthlyCreditSpend: 10000,
          models: { gen4_turbo: { maxConcurrentGenerations: MAX_CONCURRENT, maxDailyGenerations: 50 } },
        },
        usage: { models: { gen4_turbo: { dailyGenerations: 0 } } },
      });
      return;
    }
    if (req.method === 'POST' && path === '/v1/image_to_video') {
      create(res, body);
      return;
    }
    const task = /^\/v1\/tasks\/([^/]+)$/.exec(path);
    if (task && req.method === 'GET') {
      retrieve(res, task[1]!);
      return;
    }
    if (task && req.method === 'DELETE') {
      if (!tasks.delete(task[1]!)) json(res, 404, { error: 'Task not found.' });
      else res.writeHead(204).end();
      return;
    }
    json(res, 404, { error: `No route for ${req.method} ${path}` });
  }

  const loop = await startLoopback(async (request, res, http) => {
    if (request.raw.length > 0 && request.body === undefined) {
      json(res, 400, { error: 'Request body is not valid JSON.' });
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
