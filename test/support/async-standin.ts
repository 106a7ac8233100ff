/**
 * A stand-in for a version of the Media Generation Service with asynchronous mode (issue 13),
 * for the app's and the CLI's tests while the service's own implementation is built elsewhere.
 * It implements exactly the shapes of shared/api/generations.ts: `Prefer: respond-async` answers
 * 202 `GenerationAccepted` with `Location`; `GET /generations/:id` (`GenerationRecordResponse`)
 * walks the spec's steps one poll at a time; `DELETE /generations/:id` cancels; `GET /generations`
 * lists; `POST /videos/variations` makes n items with `variationOf`. With `async: false` it is a
 * service without async mode: the header is ignored and the answer is the synchronous 200.
 * Every request is in `requests` (the "request log" tests check for a second POST).
 */
import type { ServerResponse } from 'node:http';
import {
  Generation,
  GenerationAccepted,
  GenerationListResponse,
  GenerationRecordResponse,
  GenerationResponse,
} from '../../shared/api/index.ts';
import type { GeneratedItem, GenerationStatus } from '../../shared/api/index.ts';
import { sendJson, startLoopback } from '../fakes/providers/loopback.ts';
import { fakeMedia, serveFile } from '../fakes/providers/media.ts';
import type { FakeRequest } from '../fakes/providers/loopback.ts';

export interface StandinOptions {
  /** false: a service without asynchronous mode (synchronous 200 whatever the Prefer header). */
  async?: boolean;
  /** Queue positions a generation reports before it starts generating (e.g. [2, 1]). */
  queue?: number[];
  /** Polls that see `generating` before the next step (default 1). */
  generatingPolls?: number;
  /** Answer this many `GET /generations/:id` with 429 (Retry-After: 1) first. */
  rateLimitPolls?: number;
  /** End every generation failed with this error instead of succeeded. */
  fail?: { type: string; message: string };
}

interface Record_ {
  generation: Generation;
  owner: string;
  /** Steps still to show, one per poll. */
  plan: { status: GenerationStatus; queuePosition?: number }[];
  held: boolean;
  items: GeneratedItem[];
}

export interface Standin {
  /** `{base_url}` with the version prefix. */
  baseUrl: string;
  requests: FakeRequest[] | { method: string; path: string; headers: Record<string, string>; body?: unknown }[];
  posts(): { method: string; path: string; body?: unknown }[];
  /** Holds a generation at its current step until release() (a restart test's "mid-generation"). */
  hold(id: string): void;
  release(id: string): void;
  get(id: string): Generation | undefined;
  /** The ids in creation order. */
  ids(): string[];
  close(): Promise<void>;
}

const KEY = 'test-key';
export const STANDIN_KEY = KEY;

export async function startAsyncStandin(options: StandinOptions = {}): Promise<Standin> {
  const asyncMode = options.async ?? true;
  const generations = new Map<string, Record_>();
  const byIdempotencyKey = new Map<string, string>();
  let seq = 0;
  let rateLimitLeft = options.rateLimitPolls ?? 0;
  let origin = '';
  const now = (): string => new Date().toISOString();

  function makeItems(body: Record<string, unknown>, operation: Generation['operation'], n: number): GeneratedItem[] {
    return Array.from({ length: n }, (_, i) => {
      const id = `med_${++seq}`;
      return {
        id,
        url: `${origin}/files/${id}.${operation === 'images.generations' ? 'png' : 'mp4'}`,
        mime: operation === 'images.generations' ? 'image/png' : 'video/mp4',
        user: 'standin-user',
        media: operation === 'images.generations' ? 'image' : 'video',
        model: typeof body['model'] === 'string' ? body['model'] : 'clipdesk/motion',
        provider: 'standin',
        prompt: typeof body['prompt'] === 'string' ? body['prompt'] : 'a variation',
        size: '360p',
        duration: operation === 'images.generations' ? 0 : 2,
        createdAt: now(),
        ...(operation === 'videos.variations' ? { variationOf: String(body['media_id']) } : {}),
        ...(i >= 0 ? {} : {}),
      };
    });
  }

  const stats = { setupTime: 0.1, processingTime: 0.2, generationTime: 1, retries: 0, providerId: 'standin' };

  function plan(): Record_['plan'] {
    const steps: Record_['plan'] = (options.queue ?? []).map((p) => ({ status: 'queued', queuePosition: p }));
    for (let i = 0; i < (options.generatingPolls ?? 1); i++) steps.push({ status: 'generating' });
    if (options.fail) steps.push({ status: 'failed' });
    else steps.push({ status: 'transcoding' }, { status: 'thumbnail' }, { status: 'storing' }, { status: 'succeeded' });
    return steps;
  }

  function advance(rec: Record_): void {
    if (rec.held || ['succeeded', 'failed', 'canceled'].includes(rec.generation.status)) return;
    const next = rec.plan.shift();
    if (!next) return;
    const { queuePosition: _drop, ...rest } = rec.generation;
    rec.generation = Generation.parse({
      ...rest,
      status: next.status,
      ...(next.queuePosition !== undefined ? { queuePosition: next.queuePosition } : {}),
      updatedAt: now(),
      ...(next.status === 'succeeded' ? { data: rec.items, price: 0.05 * rec.items.length, stats } : {}),
      ...(next.status === 'failed' ? { error: options.fail } : {}),
    });
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    sendJson(res, status, body, headers);
  }

  const media = await fakeMedia();
  const server = await startLoopback((req, res, http) => {
    const url = new URL(req.path, 'http://x');
    const path = url.pathname.replace(/^\/v1/, '');
    // The items' files: real MP4 and PNG files, so downloads of a finished generation work.
    if (req.method === 'GET' && url.pathname.startsWith('/files/')) {
      return serveFile(http, res, url.pathname.endsWith('.png') ? media.image : media.video);
    }
    if (req.headers['authorization'] !== `Bearer ${KEY}`) {
      return send(res, 401, { success: false, error: { type: 'authentication_error', message: 'Invalid API key' } });
    }
    const owner = KEY;
    const operation = (
      {
        'POST /videos/generations': 'videos.generations',
        'POST /images/generations': 'images.generations',
        'POST /videos/variations': 'videos.variations',
      } as Record<string, Generation['operation']>
    )[`${req.method} ${path}`];
    if (operation) {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const n = typeof body['n'] === 'number' ? body['n'] : 1;
      const items = makeItems(body, operation, n);
      const wantsAsync = asyncMode && /(^|[,\s])respond-async\b/.test(req.headers['prefer'] ?? '');
      if (!wantsAsync) {
        return send(res, 200, GenerationResponse.parse({ success: true, data: items, price: 0.05 * n, stats }));
      }
      const idem = req.headers['idempotency-key'];
      const again = idem ? byIdempotencyKey.get(idem) : undefined;
      let rec = again ? generations.get(again) : undefined;
      if (!rec) {
        const id = `gen_${++seq}`;
        const at = now();
        rec = {
          owner,
          held: false,
          items,
          plan: plan(),
          generation: Generation.parse({
            id,
            object: 'generation',
            operation,
            status: 'queued',
            createdAt: at,
            updatedAt: at,
          }),
        };
        generations.set(id, rec);
        if (idem) byIdempotencyKey.set(idem, id);
      }
      const location = `${origin}/v1/generations/${rec.generation.id}`;
      return send(res, 202, GenerationAccepted.parse({ success: true, data: rec.generation }), { location });
    }
    const one = /^\/generations\/([^/]+)$/.exec(path);
    if (one) {
      const rec = generations.get(decodeURIComponent(one[1]!));
      if (!rec || rec.owner !== owner) {
        return send(res, 404, { success: false, error: { type: 'not_found_error', message: 'No such generation' } });
      }
      if (req.method === 'GET') {
        if (rateLimitLeft > 0) {
          rateLimitLeft--;
          return send(
            res,
            429,
            { success: false, error: { type: 'rate_limit_error', message: 'Too many requests' } },
            { 'retry-after': '1' },
          );
        }
        advance(rec);
        return send(res, 200, GenerationRecordResponse.parse({ success: true, result: rec.generation }));
      }
      if (req.method === 'DELETE') {
        if (!['succeeded', 'failed', 'canceled'].includes(rec.generation.status)) {
          const { queuePosition: _drop, ...rest } = rec.generation;
          rec.generation = Generation.parse({ ...rest, status: 'canceled', updatedAt: now() });
        }
        return send(res, 200, GenerationRecordResponse.parse({ success: true, result: rec.generation }));
      }
    }
    // The one model `clipdesk generate` looks up before it submits.
    if (req.method === 'GET' && decodeURIComponent(path) === '/models/clipdesk/motion') {
      return send(res, 200, {
        success: true,
        result: {
          id: 'clipdesk/motion',
          base: 'clipdesk',
          slug: 'clipdesk/motion:1',
          name: 'Motion',
          version: '1',
          versions: ['1'],
          media: 'video',
          description: 'stand-in model',
          parameters: {},
          providers: [{ id: 'standin', slug: 'standin', price: 0.01, features: ['text_to_video'] }],
        },
      });
    }
    if (req.method === 'GET' && path === '/generations') {
      const status = url.searchParams.get('status');
      const limit = Number(url.searchParams.get('limit') ?? 20);
      const page = Number(url.searchParams.get('page') ?? 0);
      const all = [...generations.values()]
        .filter((r) => r.owner === owner && (!status || r.generation.status === status))
        .map((r) => r.generation)
        .reverse();
      return send(
        res,
        200,
        GenerationListResponse.parse({
          success: true,
          result: { total: all.length, generations: all.slice(page * limit, page * limit + limit) },
        }),
      );
    }
    return send(res, 404, { success: false, error: { type: 'not_found_error', message: `No route ${path}` } });
  });
  origin = server.baseUrl;
  return {
    baseUrl: `${server.baseUrl}/v1`,
    requests: server.requests,
    posts: () => server.requests.filter((r) => r.method === 'POST'),
    hold: (id) => {
      generations.get(id)!.held = true;
    },
    release: (id) => {
      generations.get(id)!.held = false;
    },
    get: (id) => generations.get(id)?.generation,
    ids: () => [...generations.keys()],
    close: () => server.close(),
  };
}
