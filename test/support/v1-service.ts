import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

/**
 * A minimal Media Generation Service v1, written from the spec alone (nothing of server/): the
 * spec's envelopes, and for every body the spec does not show the smallest plausible record — a
 * model `{id, base, slug, media, name}`, a provider `{id, slug, name}`, a usage record of a few
 * numbers, an upload ticket `{id, uploadUrl}`. Media are served by a second origin (a CDN: the key
 * never goes there), with Range and ETag.
 *
 * The quirky variant is as correct and less convenient: unknown extra fields everywhere (and some
 * Clipdesk extension names carrying values of another shape), a 429 with `retry_after` before the
 * first generation succeeds, a media host that drops the connection halfway through the first
 * download of each file, and model ids with a version (`acme/motion:v2`), served at
 * `/models/:id` raw and percent-encoded. The plain variant has no `GET /models/:id` (404) and no
 * `GET /media/:id` (405): a client must find both in the lists.
 */
export interface V1DoubleOptions {
  quirky?: boolean;
  /** The bytes it "generates": a real MP4 and PNG, so downloads can be probed. */
  mp4: Buffer;
  png: Buffer;
}

export interface V1Double {
  /** `{base_url}`, ending in /v1. */
  url: string;
  key: string;
  /** Every API request, as `METHOD /path` (the path as sent, still encoded). */
  requests: string[];
  /** Media host connections cut mid-body (quirky). */
  dropped: number;
  close(): Promise<void>;
}

interface Item {
  id: string;
  url: string;
  mime: string;
  user: string;
  media: string;
  model: string;
  provider: string;
  prompt: string;
  size: string;
  duration: number;
  createdAt: string;
  modelSlug: string;
  providerName: string;
}

const USER = 'usr_1';
const PROVIDERS = [
  { id: 'prov_alpha', slug: 'alpha', name: 'Alpha Video' },
  { id: 'prov_beta', slug: 'beta', name: 'Beta Images' },
];

export async function startV1Double(options: V1DoubleOptions): Promise<V1Double> {
  const quirky = options.quirky === true;
  const key = 'v1-double-key-0123456789';
  const version = quirky ? 'v2' : '1';
  const models = [
    { id: 'acme/motion', base: 'acme', slug: 'motion', media: 'video', name: 'Acme Motion' },
    { id: 'acme/still', base: 'acme', slug: 'still', media: 'image', name: 'Acme Still' },
  ].map((m) =>
    // Quirky: Clipdesk extension names with values of other shapes, which the client drops.
    quirky ? { ...m, id: `${m.id}:${version}`, parameters: 'see the docs', providers: [{ id: 'prov_alpha' }] } : m,
  );
  const extra = (record: object): object =>
    quirky ? { ...record, x_vendor: { region: 'eu-west', tags: ['beta'] }, etag: 'W/"1"' } : record;
  const items: Item[] = [];
  const files = new Map<string, { bytes: Buffer; mime: string }>();
  const uploads = new Map<string, { filename: string; mime: string | null; bytes: Buffer | null }>();
  const servedOnce = new Set<string>();
  const requests: string[] = [];
  let generationsAsked = 0;
  let seq = 0;
  const double = { dropped: 0 };

  const media = createServer((req, res) => {
    serveMedia(req, res).catch((error: unknown) => res.destroy(error as Error));
  });
  const api = createServer((req, res) => {
    serveApi(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { success: false, message: String(error), code: 'internal_error' });
    });
  });
  const mediaOrigin = await listen(media);
  const apiOrigin = await listen(api);

  function modelOf(name: unknown): (typeof models)[number] | undefined {
    if (typeof name !== 'string') return undefined;
    const wanted = name.toLowerCase();
    const bare = wanted.split(':')[0];
    return models.find((m) => m.id === wanted || m.id.split(':')[0] === bare);
  }

  async function serveApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', apiOrigin);
    requests.push(`${req.method} ${url.pathname}`);
    res.setHeader('x-ratelimit-limit', '100');
    res.setHeader('x-ratelimit-remaining', '99');
    res.setHeader('x-ratelimit-reset', String(Math.floor(Date.now() / 1000) + 60));
    const auth = req.headers.authorization;
    if (!auth) return send(res, 401, { success: false, message: 'API key is missing', code: 'authentication_error' });
    if (auth !== `Bearer ${key}`)
      return send(res, 401, { success: false, message: 'Invalid API key', code: 'authentication_error' });
    if (!url.pathname.startsWith('/v1/')) return notFound(res);
    const path = url.pathname.slice(3);
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const ok = (fields: object): void => send(res, 200, extra({ success: true, ...fields }));

    if (req.method === 'GET' && path === '/models') {
      const page = paged(url, models.map(extra));
      return ok({ result: { total: models.length, models: page } });
    }
    if (req.method === 'GET' && path.startsWith('/models/')) {
      if (!quirky) return notFound(res);
      // The id's slash is a path separator when sent raw, %2F when encoded: both name the model.
      const model = modelOf(decodeURIComponent(path.slice('/models/'.length)));
      return model ? ok({ result: extra(model) }) : notFound(res);
    }
    if (req.method === 'GET' && path === '/providers') {
      return ok({ result: { total: PROVIDERS.length, providers: paged(url, PROVIDERS.map(extra)) } });
    }
    if (req.method === 'GET' && path === '/usage') {
      const spent = items.filter((i) => i.model !== '').length * 0.1;
      // Quirky: a Clipdesk extension's name with another shape (`usage`), which the client drops.
      return ok({
        result: quirky
          ? { tier: 'pro', usage: 'see dashboard', requests: requests.length }
          : { requests: requests.length, cost: spent },
      });
    }
    if (req.method === 'GET' && path === '/media') return ok({ result: listMedia(url) });
    if (req.method === 'POST' && (path === '/videos/generations' || path === '/images/generations')) {
      generationsAsked++;
      if (quirky && generationsAsked === 1) {
        return send(res, 429, {
          success: false,
          message: 'Rate limit exceeded; retry in 1 seconds',
          code: 'rate_limit_exceeded',
          retry_after: 1,
        });
      }
      return generate(res, path.startsWith('/videos') ? 'video' : 'image', body);
    }
    if (req.method === 'POST' && path === '/media/upload') {
      const id = `upl_${++seq}`;
      const filename = typeof body?.['filename'] === 'string' ? body['filename'] : 'upload';
      uploads.set(id, { filename, mime: null, bytes: null });
      return ok({ result: extra({ id, uploadUrl: `${mediaOrigin}/uploads/${id}?sig=${sign(id)}` }) });
    }
    if (path.startsWith('/media/')) {
      const id = decodeURIComponent(path.slice('/media/'.length));
      if (req.method !== 'POST') {
        return quirky
          ? notFound(res)
          : send(res, 405, { success: false, message: 'method not allowed', code: 'method_not_allowed' });
      }
      const upload = uploads.get(id);
      if (!upload?.bytes || !upload.mime) return notFound(res);
      const item = addItem({
        id,
        mime: upload.mime,
        media: upload.mime.startsWith('video/') ? 'video' : 'image',
        model: '',
        provider: '',
        prompt: '',
        size: '',
        duration: 0,
        bytes: upload.bytes,
      });
      uploads.delete(id);
      return ok({ result: extra(item) });
    }
    return notFound(res);
  }

  function generate(res: ServerResponse, kind: 'video' | 'image', body: Record<string, unknown> | undefined): void {
    const invalid = (message: string): void => send(res, 400, { success: false, message, code: 'invalid_request' });
    if (!body) return invalid('the body must be a JSON object');
    const model = modelOf(body['model']);
    if (!model || model.media !== kind) return invalid(`model: unknown ${kind} model ${String(body['model'])}`);
    const prompt = body['prompt'];
    const limit = kind === 'video' ? 500 : 1000;
    // "at most 500 characters": characters are code points.
    if (typeof prompt !== 'string' || prompt.length === 0 || [...prompt].length > limit)
      return invalid(`prompt: required, at most ${limit} characters`);
    const provider = body['provider'];
    const chosen =
      provider === undefined ? PROVIDERS[0]! : PROVIDERS.find((p) => p.id === provider || p.slug === provider);
    if (!chosen) return invalid(`provider: unknown provider ${String(provider)}`);
    const duration = kind === 'video' ? (typeof body['duration'] === 'number' ? body['duration'] : 4) : 0;
    if (kind === 'video' && (duration < 1 || duration > 30)) return invalid('duration: 1 to 30 seconds');
    const size = typeof body['size'] === 'string' ? body['size'] : kind === 'video' ? '1080p' : '1024x1024';
    const item = addItem({
      id: `${kind === 'video' ? 'vid' : 'img'}_${++seq}`,
      mime: kind === 'video' ? 'video/mp4' : 'image/png',
      media: kind,
      model: model.id.split(':')[0]!,
      provider: chosen.id,
      prompt,
      size,
      duration,
      bytes: kind === 'video' ? options.mp4 : options.png,
    });
    const { modelSlug: _slug, providerName: _name, ...generated } = item;
    send(
      res,
      200,
      extra({
        success: true,
        data: [extra(generated)],
        price: 0.1,
        stats: extra({ setupTime: 0.1, processingTime: 0.2, generationTime: 1.5, retries: 0, providerId: chosen.id }),
      }),
    );
  }

  function addItem(
    fields: Omit<Item, 'url' | 'user' | 'createdAt' | 'modelSlug' | 'providerName'> & { bytes: Buffer },
  ): Item {
    const { bytes, ...rest } = fields;
    const ext = rest.mime.split('/')[1] ?? 'bin';
    const name = `${rest.id}.${ext}`;
    files.set(name, { bytes, mime: rest.mime });
    const item: Item = {
      ...rest,
      url: `${mediaOrigin}/files/${name}`,
      user: USER,
      createdAt: new Date(Date.now() + items.length).toISOString(),
      modelSlug: rest.model === '' ? '' : `${rest.model}:${version}`,
      providerName: PROVIDERS.find((p) => p.id === rest.provider)?.name ?? '',
    };
    items.push(item);
    return item;
  }

  function listMedia(url: URL): { total: number; medias: object[] } {
    const q = url.searchParams;
    let found = items.filter(
      (i) =>
        (!q.get('media') || i.media === q.get('media')) &&
        (!q.get('model') || i.model === q.get('model')!.split(':')[0]) &&
        (!q.get('provider') || i.provider === q.get('provider')) &&
        (!q.get('search') || i.prompt.includes(q.get('search')!)),
    );
    found = q.get('sort') === 'oldest' ? found : [...found].reverse();
    return { total: found.length, medias: paged(url, found.map(extra), 25) };
  }

  async function serveMedia(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', mediaOrigin);
    if (req.method === 'PUT' && url.pathname.startsWith('/uploads/')) {
      const id = url.pathname.slice('/uploads/'.length);
      const upload = uploads.get(id);
      if (!upload || url.searchParams.get('sig') !== sign(id)) return send(res, 403, { message: 'bad signature' });
      upload.bytes = await readAll(req);
      upload.mime = (req.headers['content-type'] ?? 'application/octet-stream').split(';')[0]!.trim();
      return send(res, 200, {});
    }
    const name = url.pathname.startsWith('/files/') ? url.pathname.slice('/files/'.length) : '';
    const file = files.get(name);
    if (req.method !== 'GET' || !file) return send(res, 404, { message: 'no such file' });
    const etag = `"${createHash('sha1').update(file.bytes).digest('hex')}"`;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range && req.headers['if-range'] === etag ? Number(range[1]) : 0;
    const headers = { 'content-type': file.mime, etag, 'accept-ranges': 'bytes' };
    if (start > 0) {
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes ${start}-${file.bytes.length - 1}/${file.bytes.length}`,
        'content-length': file.bytes.length - start,
      });
      res.end(file.bytes.subarray(start));
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': file.bytes.length });
    if (quirky && !servedOnce.has(name)) {
      // The connection drops halfway: what was sent arrives, the rest never does.
      servedOnce.add(name);
      double.dropped++;
      res.write(file.bytes.subarray(0, Math.floor(file.bytes.length / 2)), () => res.socket?.destroy());
      return;
    }
    res.end(file.bytes);
  }

  return {
    url: `${apiOrigin}/v1`,
    key,
    requests,
    get dropped() {
      return double.dropped;
    },
    async close() {
      await Promise.all([close(api), close(media)]);
    },
  };
}

function sign(id: string): string {
  return createHash('sha256').update(`double:${id}`).digest('hex').slice(0, 16);
}

function paged<T>(url: URL, all: T[], defaultLimit = 25): T[] {
  const limit = Math.min(Number(url.searchParams.get('limit') ?? defaultLimit) || defaultLimit, 100);
  const page = Number(url.searchParams.get('page') ?? 0) || 0;
  return all.slice(page * limit, page * limit + limit);
}

function notFound(res: ServerResponse): void {
  send(res, 404, { success: false, message: 'not found', code: 'not_found' });
}

function send(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse((await readAll(req)).toString('utf8') || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
