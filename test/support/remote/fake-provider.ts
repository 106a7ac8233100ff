import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHmac } from 'node:crypto';

/**
 * "Acme", a small made-up AI provider on loopback for the runtime's own tests (the six real
 * providers have contract fakes of their own under test/fakes/providers). Its API:
 * - `POST /v1/jobs` (Bearer key) `{model, prompt, …, webhook_url?}` → 201 `{id}`;
 * - `GET /v1/jobs/:id` → `{status: queued|running|succeeded|failed, outputs?, cost?, error?}`;
 * - `POST /v1/jobs/:id/cancel` → 200;
 * - `GET /v1/me` → 200 (key check);
 * - `GET /files/:name` → the output, with Range support, and the misbehaviours tests arm.
 * Webhooks are POSTed to `webhook_url` when a job finishes, signed with `x-acme-signature`
 * (HMAC-SHA256 of the body with the key).
 */
export type JobOutcome = 'succeed' | 'fail' | 'content_policy' | 'no_output' | 'never';

export interface JobPlan {
  /** Polls answered queued/running before the outcome. */
  polls: number;
  outcome: JobOutcome;
  /** File names under /files/ to return as outputs. */
  outputs: string[];
  /** Sent as Retry-After (seconds) with queued/running answers. */
  retryAfter?: number;
  cost?: number;
}

export interface FakeFile {
  body: Buffer;
  /** The first N requests for the file send half of it, then cut the connection. */
  cutTimes?: number;
  /** Send part of the file then nothing more, forever. */
  stall?: boolean;
  /** Redirect this many times (to /files/:name?hop=N) before serving. */
  redirects?: number;
}

export interface FakeJob {
  id: string;
  plan: JobPlan;
  polls: number;
  canceled: boolean;
  body: Record<string, unknown>;
}

export interface AcmeFake {
  baseUrl: string;
  key: string;
  /** What the next submissions do, in order (then `plan`). */
  queue: JobPlan[];
  plan: JobPlan;
  /** Status codes the next submit calls answer with instead of creating a job (429 carries Retry-After 1). */
  submitFailures: number[];
  /** Status codes the next polls answer with. */
  pollFailures: number[];
  files: Map<string, FakeFile>;
  jobs: Map<string, FakeJob>;
  requests: Array<{ method: string; path: string; headers: Record<string, string> }>;
  submissions(): number;
  cancels(): number;
  close(): Promise<void>;
}

export async function startAcmeFake(options: { key?: string } = {}): Promise<AcmeFake> {
  const key = options.key ?? 'acme-test-key-SECRET-0001';
  let nextId = 1;
  let cancels = 0;
  const sockets = new Set<Socket>();
  const fake: AcmeFake = {
    baseUrl: '',
    key,
    queue: [],
    plan: { polls: 1, outcome: 'succeed', outputs: ['clip.mp4'] },
    submitFailures: [],
    pollFailures: [],
    files: new Map(),
    jobs: new Map(),
    requests: [],
    submissions: () => fake.jobs.size,
    cancels: () => cancels,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const authorized = (req: IncomingMessage) => req.headers.authorization === `Bearer ${key}`;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', fake.baseUrl);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    fake.requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      headers: req.headers as Record<string, string>,
    });

    const file = /^\/files\/([^/]+)$/.exec(url.pathname);
    if (file && req.method === 'GET') return serveFile(req, res, url, file[1] ?? '');
    if (!authorized(req)) return json(res, 401, { error: 'invalid api key' });

    if (req.method === 'GET' && url.pathname === '/v1/me') return json(res, 200, { ok: true });
    if (req.method === 'POST' && url.pathname === '/v1/jobs') {
      const failure = fake.submitFailures.shift();
      if (failure !== undefined) return failWith(res, failure);
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      if (typeof body['prompt'] === 'string' && body['prompt'].includes('forbidden'))
        return json(res, 422, { error: 'content_policy', message: 'the prompt was flagged by the safety system' });
      const id = `job_${nextId++}`;
      fake.jobs.set(id, { id, plan: fake.queue.shift() ?? fake.plan, polls: 0, canceled: false, body });
      return json(res, 201, { id });
    }
    const job = /^\/v1\/jobs\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    const found = job ? fake.jobs.get(job[1] ?? '') : undefined;
    if (!found) return json(res, 404, { error: 'no such job' });
    if (req.method === 'POST' && job?.[2]) {
      cancels++;
      found.canceled = true;
      return json(res, 200, { ok: true });
    }
    if (req.method === 'GET') {
      const failure = fake.pollFailures.shift();
      if (failure !== undefined) return failWith(res, failure);
      return json(
        res,
        200,
        statusOf(found),
        found.plan.retryAfter !== undefined && pending(found) ? { 'retry-after': String(found.plan.retryAfter) } : {},
      );
    }
    return json(res, 405, { error: 'method' });
  };

  const pending = (job: FakeJob) => job.plan.outcome === 'never' || job.polls <= job.plan.polls;
  const statusOf = (job: FakeJob): Record<string, unknown> => {
    if (job.canceled) return { status: 'canceled' };
    job.polls++;
    if (pending(job)) return { status: job.polls === 1 ? 'queued' : 'running' };
    return finished(job);
  };
  const finished = (job: FakeJob): Record<string, unknown> => {
    switch (job.plan.outcome) {
      case 'fail':
        return { status: 'failed', error: { type: 'failed', message: 'the model crashed' } };
      case 'content_policy':
        return { status: 'failed', error: { type: 'content_policy', message: 'the output was flagged' } };
      case 'no_output':
        return { status: 'succeeded', outputs: [] };
      default:
        return {
          status: 'succeeded',
          outputs: job.plan.outputs.map((n) => `${fake.baseUrl}/files/${n}`),
          ...(job.plan.cost !== undefined ? { cost: job.plan.cost } : {}),
        };
    }
  };
  const failWith = (res: ServerResponse, status: number) =>
    json(res, status, { error: `failure ${status}` }, status === 429 ? { 'retry-after': '1' } : {});

  const served = new Map<string, number>();
  const serveFile = (req: IncomingMessage, res: ServerResponse, url: URL, name: string) => {
    const f = fake.files.get(name);
    if (!f) return json(res, 404, { error: 'no file' });
    const hop = Number(url.searchParams.get('hop') ?? 0);
    if (f.redirects !== undefined && hop < f.redirects) {
      res.writeHead(302, { location: `/files/${name}?hop=${hop + 1}` });
      return res.end();
    }
    const n = (served.get(name) ?? 0) + 1;
    served.set(name, n);
    const total = f.body.length;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      'accept-ranges': 'bytes',
      etag: '"v1"',
    };
    if (range) {
      res.writeHead(206, {
        ...headers,
        'content-length': String(total - start),
        'content-range': `bytes ${start}-${total - 1}/${total}`,
      });
    } else {
      res.writeHead(200, { ...headers, 'content-length': String(total) });
    }
    const rest = f.body.subarray(start);
    if (f.stall) {
      res.write(rest.subarray(0, Math.min(1024, rest.length)));
      return; // never ends; the client gives up
    }
    if (f.cutTimes !== undefined && n <= f.cutTimes) {
      // Half the bytes, then the connection closes (FIN after the data, as a dropped proxy would).
      res.write(rest.subarray(0, Math.floor(rest.length / 2)), () => res.socket?.end());
      return;
    }
    res.end(rest);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) });
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** The signature the fake puts on webhook deliveries (and the test adapter checks). */
export function acmeSignature(key: string, body: Buffer | string): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** Sends a job's webhook to the URL it was submitted with, signed like the provider would. */
export async function deliverWebhook(fake: AcmeFake, jobId: string, status: 'succeeded' | 'failed'): Promise<number> {
  const job = fake.jobs.get(jobId);
  const target = job?.body['webhook_url'];
  if (typeof target !== 'string') throw new Error(`job ${jobId} has no webhook_url`);
  const body = JSON.stringify(
    status === 'succeeded'
      ? { id: jobId, status, outputs: (job?.plan.outputs ?? []).map((n) => `${fake.baseUrl}/files/${n}`) }
      : { id: jobId, status, error: { type: 'failed', message: 'the model crashed' } },
  );
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-acme-signature': acmeSignature(fake.key, body) },
    body,
  });
  return res.status;
}
