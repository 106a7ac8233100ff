import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { ManualClock } from '../shared/clock.ts';
import { startService } from '../server/index.ts';
import { openDatabase } from '../server/storage/db.ts';
import { newMediaId } from '../server/storage/layout.ts';
import { insertMedia, listMedia, toMediaItem } from '../server/storage/media-repo.ts';
import type { ResolvedMediaFilters, UrlMaker } from '../server/storage/media-repo.ts';
import { percentile, reportFigure } from './support/report.ts';
import { syntheticPrompt } from '../test/support/synthetic-prompts.ts';

/**
 * `GET /media` on 100,000 items with filters, search and sort, through the whole service (auth,
 * rate limiting, validation, routing) against a bare node:http server running the same SQL and
 * building the same JSON. Both serve the same database; the same client loads each in turn.
 * Goals (issue 11): ≥ 500 requests/s over the mixed set and every query shape at p99 ≤ 25 ms (one
 * line per shape, each loaded on its own). The ratio to the bare server is for information: it
 * skips auth, rate counting and URL signing, which are most of a request now that the SQL is fast.
 */
const ITEMS = 100_000;
const REQUESTS = 1_500;
const ROUNDS = 3;
const CONNECTIONS = 8;
const SHAPE_REQUESTS = 240;

/** The query shapes: name → the query of the i-th request. */
const SHAPES: Record<string, (i: number) => string> = {
  newest: () => '?limit=25',
  'filters-oldest': () => '?media=video&size=720p&sort=oldest&limit=50',
  search: () => '?search=sunset&limit=25',
  'model-provider-page': () => '?model=clipdesk%2Fmotion&provider=swift&page=3',
  'me-search-oldest': () => '?user=me&search=red%20fox&sort=oldest',
  'user-image-100': () => '?user=user3&media=image&limit=100',
  // OFFSET in the middle of the 60,000 items user0 sees: the most rows a page can step over.
  'deep-page': () => '?page=1200',
  'me-deep-page-oldest': () => '?user=me&sort=oldest&page=200',
  // A different search each time, so no total comes from the per-version cache.
  'search-uncached': (i) => `?search=${encodeURIComponent(`number ${(i * 7919) % ITEMS}`)}`,
  'search-short': () => '?search=ox',
  'search-common-word-filtered': () => '?search=ocean&media=video&size=1080p&sort=oldest',
};
const MIXED = Object.values(SHAPES);

export default async function (): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-media-'));
  const clock = new ManualClock();
  const service = await startService({ dataDir, clock, sweepIntervalMs: 0 });
  const bare = createBareServer(dataDir);
  try {
    const { key } = await service.createKey({ user: 'user0', tier: 'enterprise' });
    await seed(dataDir, clock.now());
    await new Promise<void>((r) => bare.server.listen(0, '127.0.0.1', r));
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/v1`;

    // The service's limits are real; move its clock a day on every few hundred requests so the
    // benchmark measures serving, not 429s.
    let sent = 0;
    const tick = () => {
      if (++sent % 500 === 0) clock.advance(86_400_000);
    };
    await load(service.url, key, 200, tick); // warm both
    await load(bareUrl, key, 200, tick);
    // Alternate short rounds and keep each side's best: the machine is shared, and noise that
    // lands on one side only should not decide the ratio.
    const theirs = { rps: 0, p99: Infinity };
    const ours = { rps: 0, p99: Infinity };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [side, url] of [
        [theirs, bareUrl],
        [ours, service.url],
      ] as const) {
        const r = await load(url, key, REQUESTS / ROUNDS, tick);
        side.rps = Math.max(side.rps, r.rps);
        side.p99 = Math.min(side.p99, r.p99);
      }
    }
    reportFigure(
      'service-media-list-rps',
      ours.rps,
      'req/s',
      ours.rps / theirs.rps,
      'bare node:http with the same SQL and JSON',
    );
    reportFigure('service-media-list-p99', ours.p99, 'ms', ours.p99 / theirs.p99, 'bare node:http p99');
    for (const [name, query] of Object.entries(SHAPES)) {
      const bareShape = await load(bareUrl, key, SHAPE_REQUESTS, tick, [query]);
      const ourShape = await load(service.url, key, SHAPE_REQUESTS, tick, [query]);
      reportFigure(
        `service-media-list-${name}-p99`,
        ourShape.p99,
        'ms',
        ourShape.p99 / bareShape.p99,
        `bare node:http p99 (${ourShape.rps.toFixed(0)} req/s, goal ≤ 25 ms)`,
      );
    }
  } finally {
    await new Promise((r) => bare.server.close(r));
    await bare.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function seed(dataDir: string, now: number): Promise<void> {
  const db = openDatabase(dataDir);
  await db.transaction(async (tx) => {
    for (let i = 0; i < ITEMS; i++) {
      const kind = i % 5 === 0 ? 'image' : 'video';
      const motion = i % 2 === 0;
      await insertMedia(tx, {
        id: newMediaId(),
        user_id: `user${i % 10}`,
        key_id: null,
        kind,
        model: kind === 'image' ? 'clipdesk/still' : motion ? 'clipdesk/motion' : 'clipdesk/drift',
        model_version: '1.0',
        provider_id: ['local-swift', 'local-studio', 'local-prism'][i % 3]!,
        provider_slug: ['swift', 'studio', 'prism'][i % 3]!,
        provider_name: ['Local Swift', 'Local Studio', 'Local Prism'][i % 3]!,
        prompt: syntheticPrompt(i),
        size: kind === 'image' ? '1024x1024' : ['360p', '720p', '1080p'][i % 3]!,
        duration: kind === 'image' ? 0 : 4,
        width: 1280,
        height: 720,
        mime: kind === 'image' ? 'image/png' : 'video/mp4',
        files: [
          {
            name: kind === 'image' ? 'image.png' : 'video.mp4',
            mime: kind === 'image' ? 'image/png' : 'video/mp4',
            bytes: 1000,
          },
        ],
        thumbnail: 'thumbnail.jpg',
        bytes: 1000,
        price: 0.04,
        public: i % 2,
        created_at: now - (ITEMS - i) * 1000,
        expires_at: now + 86_400_000 * 365,
      });
    }
  });
  await db.close();
}

/** The comparator: the same statement and the same item JSON, with no auth, limits or validation. */
function createBareServer(dataDir: string) {
  const db = openDatabase(dataDir);
  const urls: UrlMaker = {
    fileUrl: (row, file) => `http://127.0.0.1/v1/files/${row.id}/${file}?sig=x`,
    urlExpiresAt: () => null,
  };
  const server = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const viewer = 'user0';
    const user = q.get('user');
    const model = q.get('model');
    const provider = q.get('provider');
    const f: ResolvedMediaFilters = {
      viewer,
      user: user === null ? undefined : user === 'me' ? viewer : user,
      media: (q.get('media') ?? undefined) as ResolvedMediaFilters['media'],
      size: q.get('size') ?? undefined,
      model: model ?? undefined,
      providerId: provider === null ? undefined : `local-${provider}`,
      search: q.get('search') ?? undefined,
      sort: q.get('sort') === 'oldest' ? 'oldest' : 'newest',
    };
    const limit = Math.min(Number(q.get('limit') ?? 25), 100);
    listMedia(db, f, limit, Number(q.get('page') ?? 0)).then(
      ({ total, rows }) => {
        const body = JSON.stringify({
          success: true,
          result: { total, medias: rows.map((r) => toMediaItem(r, urls)) },
        });
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      },
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  return { server, close: () => db.close() };
}

async function load(
  baseUrl: string,
  key: string,
  count: number,
  tick: () => void,
  queries: ReadonlyArray<(i: number) => string> = MIXED,
): Promise<{ rps: number; p99: number }> {
  const url = new URL(baseUrl);
  const pool = new Pool(url.origin, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      tick();
      const t0 = performance.now();
      const res = await pool.request({
        method: 'GET',
        path: `${url.pathname}/media${queries[i % queries.length]!(i)}`,
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`GET /media answered ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { rps: count / seconds, p99: percentile(latencies, 99) };
}
