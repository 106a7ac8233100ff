/**
 * A contract fake of the Luma Dream Machine API v1 (api.lumalabs.ai/dream-machine/v1) on loopback,
 * for the official `lumaai` SDK through its `baseURL`. What it follows, from Luma's docs and the
 * SDK's types:
 * - Bearer auth on every API path; refusals are `{"detail": "..."}` (401, 400, 404, 429, 500).
 * - `POST /generations/video` (the SDK's path; `POST /generations` of the docs too) → 201 with the
 *   generation in state `queued`; `GET /generations/{id}` → queued → dreaming → completed with
 *   `assets.video`, or failed with `failure_reason`; `GET /generations?limit&offset`;
 *   `DELETE /generations/{id}` → 204; `GET /credits` → `{credit_balance}`; `GET /ping`.
 * - `callback_url`: the generation object is POSTed on each change of state (dreaming, completed,
 *   failed), retried 3 times 100 ms apart when not answered 200. Jobs with a callback advance on
 *   their own (every 20 ms) instead of per poll, as a webhook-driven client does not poll.
 * - Outputs are real MP4s with AAC audio on the same server, at a public path (Luma's CDN URLs need
 *   no key), with Range support.
 *
 * Scenarios: succeed, fail (failure_reason "Job failed"), cancel (the generation is deleted at
 * Luma after the first poll: later polls answer 404), slow (stays dreaming until deleted),
 * content_policy ("Advanced prompt moderation failed"), no_output (completed without a video) are
 * fixed per job when it is created; unauthorized (401), rate_limited (429 + Retry-After),
 * server_error (500) and malformed (a 2xx whose JSON does not parse) apply to every API request
 * while set.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { behaviourOf, problemText, rateLimitedPoll, schemaRefusal } from './behaviour.ts';
import { sendJson, sendMalformed, startLoopback } from './loopback.ts';
import type { FakeRequest } from './loopback.ts';
import { fakeMedia, serveFile } from './media.ts';
import type { FakeOptions, FakeScenario, RunningFake } from './types.ts';

const API = '/dream-machine/v1';
const MODELS = ['ray-2', 'ray-flash-2'];
const RESOLUTIONS = ['540p', '720p', '1080p', '4k'];
const DURATIONS = ['5s', '9s'];
const ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'];
const STEP_MS = 20;

/** A request field as text, for checks and messages (objects as JSON). */
const text = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

type State = 'queued' | 'dreaming' | 'completed' | 'failed';

interface Job {
  id: string;
  scenario: FakeScenario;
  request: Record<string, unknown>;
  createdAt: string;
  state: State;
  polls: number;
  deleted: boolean;
  timer?: NodeJS.Timeout;
}

export async function startLumaFake(options: FakeOptions = {}): Promise<RunningFake> {
  const key = options.key ?? 'test-luma-key-0001';
  const pollsBeforeDone = options.pollsBeforeDone ?? 2;
  const retryAfter = options.retryAfterSeconds ?? 1;
  const media = await fakeMedia();
  const jobs = new Map<string, Job>();
  const deliveries = new Set<Promise<void>>();
  let created = 0;
  let closed = false;
  let origin = '';

  const fake: RunningFake = {
    baseUrl: '',
    key,
    scenario: options.scenario ?? 'succeed',
    behaviour: behaviourOf(options),
    requests: [],
    submissions: () => created,
    close: async () => {
      closed = true;
      for (const job of jobs.values()) clearTimeout(job.timer);
      await Promise.allSettled([...deliveries]);
      await loopback.close();
    },
  };

  /** What the API shows of a job: Luma's generation object. */
  const view = (job: Job): Record<string, unknown> => ({
    id: job.id,
    generation_type: 'video',
    state: job.state,
    failure_reason:
      job.state !== 'failed'
        ? null
        : job.scenario === 'content_policy'
          ? 'Advanced prompt moderation failed'
          : 'Job failed',
    created_at: job.createdAt,
    model: job.request['model'],
    assets:
      job.state === 'completed' && job.scenario !== 'no_output'
        ? { video: `${origin}/media/${job.id}.mp4`, image: null, progress_video: null }
        : job.state === 'completed'
          ? {}
          : null,
    request: job.request,
  });

  const finalState = (job: Job): State =>
    job.scenario === 'fail' || job.scenario === 'content_policy' ? 'failed' : 'completed';

  /** POSTs the generation to its callback_url; Luma retries 3 times, 100 ms apart, unless answered 200. */
  const deliver = (job: Job): void => {
    const url = job.request['callback_url'];
    if (typeof url !== 'string' || closed) return;
    const body = JSON.stringify(view(job));
    const attempt = async (): Promise<void> => {
      for (let i = 0; i < 4 && !closed; i++) {
        try {
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          await res.arrayBuffer();
          if (res.status === 200) return;
        } catch {
          // unreachable receiver: retry like Luma does
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const p = attempt();
    deliveries.add(p);
    void p.finally(() => deliveries.delete(p));
  };

  const setState = (job: Job, state: State): void => {
    if (job.state === state) return;
    job.state = state;
    deliver(job);
  };

  /** Jobs with a callback advance by themselves, one state per step. */
  const advanceOnTimer = (job: Job): void => {
    job.timer = setTimeout(() => {
      if (job.deleted || closed) return;
      if (job.state === 'queued') setState(job, 'dreaming');
      else if (job.scenario === 'cancel')
        job.deleted = true; // removed at Luma: no callback for that
      else if (job.scenario !== 'slow') setState(job, finalState(job));
      if (job.deleted) return;
      if (job.state === 'queued' || job.state === 'dreaming') advanceOnTimer(job);
    }, STEP_MS);
  };

  /** Jobs without a callback advance per poll: queued, then dreaming, then done. */
  const advanceOnPoll = (job: Job): void => {
    job.polls += 1;
    if (job.state === 'completed' || job.state === 'failed') return;
    if (job.scenario === 'slow' || job.polls <= pollsBeforeDone) {
      job.state = job.polls <= 1 ? 'queued' : 'dreaming';
      return;
    }
    job.state = finalState(job);
  };

  const validate = (body: Record<string, unknown>): string | undefined => {
    const { model, prompt, resolution, duration, aspect_ratio: ratio, loop, keyframes } = body;
    if (!MODELS.includes(text(model))) return `Invalid model: ${text(model)}`;
    if (typeof prompt !== 'string' || prompt.length === 0) {
      if (!keyframes) return 'Prompt is required';
    } else if (prompt.length < 3) return 'Prompt is too short, minimum length is 3 characters';
    else if (prompt.length > 5000) return 'Prompt is too long, maximum length is 5000 characters';
    if (resolution !== undefined && !RESOLUTIONS.includes(text(resolution))) return 'Invalid resolution';
    if (duration !== undefined && !DURATIONS.includes(text(duration))) return 'Invalid duration';
    if (ratio !== undefined && !ASPECT_RATIOS.includes(text(ratio))) return 'Invalid aspect ratio';
    if (loop !== undefined && typeof loop !== 'boolean') return 'Invalid loop';
    return undefined;
  };

  const api = (req: FakeRequest, res: ServerResponse, path: string): void => {
    const body = req.body;
    if (req.headers['authorization'] !== `Bearer ${key}` || fake.scenario === 'unauthorized') {
      sendJson(res, 401, { detail: 'Invalid API key provided' });
      return;
    }
    if (fake.scenario === 'rate_limited') {
      sendJson(
        res,
        429,
        { detail: 'Too many requests, please try again later' },
        { 'retry-after': String(retryAfter) },
      );
      return;
    }
    if (fake.scenario === 'server_error') {
      sendJson(res, 500, { detail: 'Internal server error' });
      return;
    }
    const url = new URL(path, 'http://fake');
    const route = url.pathname;
    const one = /^\/generations\/([^/]+)$/.exec(route);
    if (req.method === 'GET' && route === '/ping') return sendJson(res, 200, { message: 'pong' });
    if (req.method === 'GET' && route === '/credits') {
      if (fake.scenario === 'malformed') return sendMalformed(res);
      return sendJson(res, 200, { credit_balance: 12_345 });
    }
    if (req.method === 'POST' && (route === '/generations/video' || route === '/generations')) {
      if (!body || typeof body !== 'object') return sendJson(res, 400, { detail: 'Invalid request body' });
      const problem = validate(body as Record<string, unknown>);
      if (problem) return sendJson(res, 400, { detail: problem });
      const named = (body as Record<string, unknown>)['model'];
      const model = typeof named === 'string' ? named : 'ray-2';
      const refused = schemaRefusal('luma', model, body);
      if (refused)
        return sendJson(res, 400, { detail: refused.map((p) => `${p.field}: ${problemText(p)}`).join('; ') });
      const job: Job = {
        id: randomUUID(),
        scenario: fake.scenario,
        request: { generation_type: 'video', ...(body as Record<string, unknown>) },
        createdAt: new Date().toISOString(),
        state: 'queued',
        polls: 0,
        deleted: false,
      };
      jobs.set(job.id, job);
      created += 1;
      if (typeof job.request['callback_url'] === 'string') advanceOnTimer(job);
      if (fake.scenario === 'malformed') return sendMalformed(res);
      return sendJson(res, 201, view(job));
    }
    if (req.method === 'GET' && route === '/generations') {
      const limit = Math.max(1, Math.min(100, Number(url.searchParams.get('limit') ?? 10) || 10));
      const offset = Math.max(0, Number(url.searchParams.get('offset') ?? 0) || 0);
      const all = [...jobs.values()].filter((j) => !j.deleted).reverse();
      const page = all.slice(offset, offset + limit).map(view);
      return sendJson(res, 200, {
        generations: page,
        count: page.length,
        has_more: offset + limit < all.length,
        limit,
        offset,
      });
    }
    if (one) {
      const job = jobs.get(decodeURIComponent(one[1] ?? ''));
      if (!job || job.deleted) return sendJson(res, 404, { detail: 'Generation not found' });
      if (req.method === 'DELETE') {
        job.deleted = true;
        clearTimeout(job.timer);
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'GET') {
        if (rateLimitedPoll(fake.behaviour, res, { detail: 'Too many requests' })) return;
        if (job.timer === undefined) advanceOnPoll(job);
        // Deleted at Luma (by its owner) after the first look: from then on it is gone.
        if (job.scenario === 'cancel' && job.polls > 1) {
          job.deleted = true;
          return sendJson(res, 404, { detail: 'Generation not found' });
        }
        if (fake.scenario === 'malformed') return sendMalformed(res);
        return sendJson(res, 200, view(job));
      }
    }
    sendJson(res, 404, { detail: 'Not Found' });
  };

  const loopback = await startLoopback((req, res, http) => {
    if (/^\/media\/[^/]+\.mp4$/.test(req.path) && (req.method === 'GET' || req.method === 'HEAD')) {
      if (fake.behaviour.expiredOutputs) return sendJson(res, 404, { detail: 'Not Found' });
      return serveFile(http, res, media.video);
    }
    if (req.path.startsWith(`${API}/`)) return api(req, res, req.path.slice(API.length));
    sendJson(res, 404, { detail: 'Not Found' });
  });
  origin = loopback.baseUrl;
  fake.baseUrl = `${origin}${API}`;
  fake.requests = loopback.requests;
  return fake;
}
