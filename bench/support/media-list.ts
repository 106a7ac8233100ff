import { Pool } from 'undici';
import { openDatabase } from '../../server/storage/db.ts';
import { newMediaId } from '../../server/storage/layout.ts';
import { insertMedia } from '../../server/storage/media-repo.ts';
import type { NewMedia } from '../../server/storage/media-repo.ts';
import { syntheticPrompt } from '../../test/support/synthetic-prompts.ts';
import { percentile } from './report.ts';

/**
 * What the `GET /media` benchmarks share (service-media-list.ts on SQLite against a bare server,
 * service-media-list-postgres.ts on PostgreSQL against SQLite): the same 100,000 items, the same
 * query shapes and the same client, so their figures compare.
 */
export const ITEMS = 100_000;
const CONNECTIONS = 8;

/** The query shapes: name → the query of the i-th request. */
export const SHAPES: Record<string, (i: number) => string> = {
  newest: () => '?limit=25',
  'filters-oldest': () => '?media=video&size=720p&sort=oldest&limit=50',
  search: () => '?search=sunset&limit=25',
  // clipdesk/drift: the odd items, all public (clipdesk/motion's are the even ones, all private to
  // users other than user0, so that shape measured an empty page).
  'model-provider-page': () => '?model=clipdesk%2Fdrift&provider=swift&page=3',
  'me-search-oldest': () => '?user=me&search=red%20fox&sort=oldest',
  // user5's items are all public images (i % 10 = 5); user3 has none, so that shape measured an empty page.
  'user-image-100': () => '?user=user5&media=image&limit=100',
  // OFFSET in the middle of the 60,000 items user0 sees: the most rows a page can step over.
  'deep-page': () => '?page=1200',
  'me-deep-page-oldest': () => '?user=me&sort=oldest&page=200',
  // A different search each time, so no total comes from the per-version cache.
  'search-uncached': (i) => `?search=${encodeURIComponent(`number ${(i * 7919) % ITEMS}`)}`,
  'search-short': () => '?search=ox',
  'search-common-word-filtered': () => '?search=ocean&media=video&size=1080p&sort=oldest',
};
export const MIXED = Object.values(SHAPES);

/** The i-th of the ITEMS seeded items (only its id is random), created a second after the one before. */
export function syntheticItem(i: number, now: number): NewMedia {
  const kind = i % 5 === 0 ? 'image' : 'video';
  const motion = i % 2 === 0;
  return {
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
  };
}

/** The ITEMS items into the SQLite database of `dataDir`, in one transaction, as the service inserts them. */
export async function seedSqlite(dataDir: string, now: number): Promise<void> {
  const db = openDatabase(dataDir);
  try {
    await db.transaction(async (tx) => {
      for (let i = 0; i < ITEMS; i++) await insertMedia(tx, syntheticItem(i, now));
    });
  } finally {
    await db.close();
  }
}

/**
 * `count` requests of `GET /media` over CONNECTIONS connections, cycling through `queries`;
 * `tick` is called before each (the benchmarks move the service's clock with it).
 */
export async function loadMediaList(
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
