import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaListResponse } from '../../../shared/api/index.ts';
import { insertMedia } from '../../../server/storage/media-repo.ts';
import { newMediaId } from '../../../server/storage/layout.ts';
import { openTestDatabase, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

let t: TestService;
let alice: TestClient;
let bob: TestClient;
const T0 = Date.UTC(2026, 0, 1);

/**
 * Listing is tested on rows written straight into the service's database (the same insert the
 * service uses), so the filters can be checked on many items without rendering each one.
 */
beforeAll(async () => {
  t = await startTestService();
  alice = await t.client('alice', 'enterprise');
  bob = await t.client('bob', 'enterprise');
  const db = await openTestDatabase(t.dataDir);
  const prompts = [
    'a red fox',
    'blue whale 100% real',
    'under_score city',
    'quote " and \' marks',
    'back\\slash OR NOT *',
    'red sunset',
  ];
  let n = 0;
  for (const user of ['alice', 'bob']) {
    for (const [i, prompt] of prompts.entries()) {
      for (const isPublic of [0, 1]) {
        n++;
        await insertMedia(db, {
          id: newMediaId(),
          user_id: user,
          key_id: null,
          kind: i % 3 === 2 ? 'image' : 'video',
          model: i % 2 === 0 ? 'clipdesk/motion' : 'clipdesk/drift',
          model_version: i % 2 === 0 ? '1.1' : '1.0',
          provider_id: i % 2 === 0 ? 'local-swift' : 'local-studio',
          provider_slug: i % 2 === 0 ? 'swift' : 'studio',
          provider_name: i % 2 === 0 ? 'Local Swift (procedural)' : 'Local Studio (procedural)',
          prompt: `${user}: ${prompt}`,
          size: i % 3 === 2 ? '512x512' : '360p',
          duration: i % 3 === 2 ? 0 : 2,
          width: 640,
          height: 360,
          mime: i % 3 === 2 ? 'image/png' : 'video/mp4',
          files: [{ name: 'video.mp4', mime: 'video/mp4', bytes: 10 }],
          thumbnail: null,
          bytes: 10,
          price: 0.01,
          public: isPublic,
          // Pairs share a timestamp so the tiebreak is exercised.
          created_at: T0 + Math.floor(n / 2) * 1000,
          expires_at: T0 + 86_400_000 * 30,
        });
      }
    }
  }
  await db.close();
});
afterAll(async () => {
  await t.stop();
});

async function list(c: TestClient, query: string) {
  const res = await c.call('GET', `/media${query}`);
  expect(res.status).toBe(200);
  return MediaListResponse.parse(res.body).result;
}

describe('GET /media', () => {
  it('lists own items and others’ public items only, with total', async () => {
    const r = await list(alice, '');
    expect(r.total).toBe(12 + 6);
    expect(r.medias.every((m) => m.user === 'alice' || m.public === true)).toBe(true);
    expect(r.medias).toHaveLength(18);
  });

  it('user=me, and another user’s id shows only their public items', async () => {
    expect((await list(alice, '?user=me')).total).toBe(12);
    const bobs = await list(alice, '?user=bob');
    expect(bobs.total).toBe(6);
    expect(bobs.medias.every((m) => m.user === 'bob' && m.public)).toBe(true);
  });

  it('limit defaults to 25, clamps at 100, and page is zero-based', async () => {
    const first = await list(bob, '?limit=5');
    const second = await list(bob, '?limit=5&page=1');
    expect(first.medias).toHaveLength(5);
    expect(second.medias).toHaveLength(5);
    expect(new Set([...first.medias, ...second.medias].map((m) => m.id)).size).toBe(10);
    expect((await list(bob, '?limit=1000000')).medias).toHaveLength(18);
    const huge = await list(bob, '?page=999999');
    expect(huge).toMatchObject({ total: 18, medias: [] });
  });

  it('huge or bad numbers are a 400, never a 500', async () => {
    for (const q of [
      '?page=99999999999999999999',
      '?limit=0',
      '?limit=-1',
      '?page=-1',
      '?limit=abc',
      '?page=1.5',
      '?sort=sideways',
      '?media=audio',
    ]) {
      const res = await alice.call('GET', `/media${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe('invalid_request_error');
    }
  });

  it('filters by media, size, model (base/slug or with version) and provider (id or slug)', async () => {
    expect((await list(alice, '?user=me&media=image')).medias.every((m) => m.media === 'image')).toBe(true);
    expect((await list(alice, '?user=me&media=image')).total).toBe(4);
    expect((await list(alice, '?user=me&size=512x512')).total).toBe(4);
    expect((await list(alice, '?user=me&model=clipdesk/motion')).total).toBe(6);
    expect((await list(alice, '?user=me&model=clipdesk/motion:1.1')).total).toBe(6);
    expect((await list(alice, '?user=me&model=clipdesk/motion:1.0')).total).toBe(0);
    expect((await list(alice, '?user=me&provider=swift')).total).toBe(6);
    expect((await list(alice, '?user=me&provider=local-studio')).total).toBe(6);
    expect((await list(alice, '?provider=nobody')).total).toBe(0);
    const m = (await list(alice, '?user=me&model=clipdesk/drift')).medias[0]!;
    expect(m.modelSlug).toBe('clipdesk/drift:1.0');
    expect(m.providerName).toBe('Local Studio (procedural)');
  });

  it('search matches within the prompt; SQL and FTS metacharacters are plain text', async () => {
    expect((await list(alice, '?user=me&search=red')).total).toBe(4);
    expect((await list(alice, '?user=me&search=RED%20FOX')).total).toBe(2);
    const cases: Array<[string, number]> = [
      ['100%', 2],
      ['%', 2],
      ['_', 2],
      ['under_score', 2],
      ['"', 2],
      ["'", 2],
      ["' OR 1=1 --", 0],
      ['\\', 2],
      ['OR NOT *', 2],
      ['*', 2],
      ['NEAR(', 0],
      ['a', 12],
      ['); DROP TABLE media; --', 0],
    ];
    for (const [q, n] of cases)
      expect((await list(alice, `?user=me&search=${encodeURIComponent(q)}`)).total, q).toBe(n);
    expect((await list(alice, '')).total).toBe(18);
  });

  it('sort newest (default) and oldest, with a stable tiebreak', async () => {
    const newest = (await list(alice, '?user=me&limit=100')).medias;
    const oldest = (await list(alice, '?user=me&sort=oldest&limit=100')).medias;
    expect(newest.map((m) => m.id)).toEqual([...oldest].reverse().map((m) => m.id));
    const times = newest.map((m) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Pages do not repeat or skip items even where timestamps tie.
    const paged: string[] = [];
    for (let p = 0; p < 4; p++)
      paged.push(...(await list(alice, `?user=me&limit=3&page=${p}`)).medias.map((m) => m.id));
    expect(paged).toEqual(newest.slice(0, 12).map((m) => m.id));
  });

  it('ids with path traversal are not found, never a file', async () => {
    for (const id of ['..%2F..%2Fsecret.key', '..', '%2e%2e', 'med_..', 'med_000000000000000000000000']) {
      const res = await alice.call('GET', `/media/${id}`);
      expect(res.status, id).toBe(404);
      const content = await alice.call('GET', `/media/${id}/content`);
      expect(content.status, id).toBe(404);
    }
  });
});

describe('models and providers', () => {
  it('list with limit/page and total; single records by id, slug and version', async () => {
    const models = await alice.call('GET', '/models');
    expect(models.body.result.total).toBe(3);
    expect((await alice.call('GET', '/models?limit=1&page=1')).body.result.models).toHaveLength(1);
    const motion = await alice.call('GET', '/models/clipdesk/motion');
    expect(motion.body.result).toMatchObject({
      id: 'clipdesk/motion',
      version: '1.1',
      versions: ['1.0', '1.1'],
      media: 'video',
    });
    expect(motion.body.result.parameters.duration).toEqual({ min: 2, max: 8, default: 4 });
    expect((motion.body.result.providers as Array<{ slug: string }>).map((p) => p.slug).sort()).toEqual([
      'prism',
      'studio',
      'swift',
    ]);
    expect((await alice.call('GET', '/models/clipdesk%2Fmotion:1.0')).body.result.version).toBe('1.0');
    expect((await alice.call('GET', '/models/clipdesk/motion:7')).status).toBe(404);
    const providers = await alice.call('GET', '/providers');
    expect(providers.body.result.total).toBeGreaterThanOrEqual(3);
    expect((await alice.call('GET', '/providers/local-prism')).body.result).toMatchObject({
      slug: 'prism',
      status: 'available',
    });
    expect((await alice.call('GET', '/providers/..')).status).toBe(404);
  });

  it('usage reports the tier, limits and counts', async () => {
    const res = await bob.call('GET', '/usage');
    expect(res.body.result).toMatchObject({ tier: 'enterprise', limits: { concurrency: { video: 20 } } });
    expect(res.body.result.usage.requests.minute).toBeGreaterThan(0);
    expect(res.body.result.usage.cost.byKey[0].keyId).toBe(bob.keyId);
  });

  it('the OpenAPI document describes the extensions', async () => {
    const res = await fetch(`${t.service.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of [
      '/media',
      '/media/upload',
      '/media/{id}',
      '/media/{id}/content',
      '/media/{id}/retain',
      '/usage',
      '/videos/generations',
      '/images/generations',
      '/models/{id}',
      '/providers/{id}',
    ]) {
      expect(doc.paths, p).toHaveProperty([p]);
    }
    expect(JSON.stringify(doc)).toContain('Idempotency-Key');
    expect(JSON.stringify(doc)).toContain('ignoredParameters');
  });
});

describe('GET /media search fuzz (defect 4)', () => {
  let s: TestService;
  let carol: TestClient;
  const prompts: string[] = [
    ...[...Array.from({ length: 32 }, (_, c) => c).slice(1), 0x7f].map((c) => `ctl ${c}: a${String.fromCharCode(c)}bc`),
    'x AND y',
    'NEAR(a b)',
    '"quoted" text',
    'a*b star',
    '-minus +plus',
    'col:umn ^caret',
    '(paren) OR NOT',
    'ab',
    'Z',
    '',
  ];
  beforeAll(async () => {
    s = await startTestService();
    carol = await s.client('carol', 'enterprise');
    const db = await openTestDatabase(s.dataDir);
    for (const [i, prompt] of prompts.entries()) {
      await insertMedia(db, stillImageRow({ id: newMediaId(), user: 'carol', prompt, isPublic: i % 2, at: T0 + i }));
    }
    await db.close();
  });
  afterAll(async () => {
    await s.stop();
  });

  it('NUL in search is a 400 invalid_request_error, not an FTS5 syntax error', async () => {
    for (const q of ['%00abc', 'ab%00', '%00', 'a%00']) {
      const res = await carol.call('GET', `/media?search=${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.code, q).toBe('invalid_request_error');
    }
  });

  it('every control character and FTS5 operator is plain text, whatever its length', async () => {
    const controls = [...Array.from({ length: 32 }, (_, c) => c).slice(1), 0x7f].map((c) => String.fromCharCode(c));
    const searches = [
      ...controls,
      ...controls.map((c) => `a${c}`),
      ...controls.map((c) => `a${c}bc`),
      ...controls.map((c) => `${c}abc`),
      'AND',
      'x AND y',
      'and',
      'OR',
      'or not',
      'NOT',
      'NEAR',
      'NEAR(',
      'near(a b)',
      'NEAR/2',
      '"',
      '""',
      '"quoted"',
      '*',
      'a*',
      '*b',
      '-',
      '-minus',
      '+',
      ':',
      'col:',
      'col:umn',
      '^',
      '^caret',
      '(',
      ')',
      '()',
      'a',
      'A',
      'z',
      'ab',
      'AB',
      'b ',
      ' ',
      '  ',
      'zzz',
    ];
    for (const search of searches) {
      const res = await carol.call('GET', `/media?user=me&limit=100&search=${encodeURIComponent(search)}`);
      expect(res.status, JSON.stringify(search)).toBe(200);
      const want = prompts.filter((p) => p.toLowerCase().includes(search.toLowerCase())).length;
      expect(res.body.result.total, JSON.stringify(search)).toBe(want);
      expect(res.body.result.medias, JSON.stringify(search)).toHaveLength(want);
    }
  });
});

describe('GET /media deep pages and short searches, asked again and after a write', () => {
  let s: TestService;
  let dana: TestClient;
  const items: Array<{ id: string; user: string; prompt: string; isPublic: number; at: number }> = [];
  const words = ['Fox', 'box', 'ox', 'oxen', 'sunset', 'o', 'é', 'É tude'];
  async function add(i: number): Promise<void> {
    const db = await openTestDatabase(s.dataDir);
    try {
      const it = {
        id: newMediaId(),
        user: i % 3 === 0 ? 'erin' : 'dana',
        prompt: `${words[i % words.length]} ${words[(i * 5) % words.length]} ${i}`,
        isPublic: i % 2,
        at: T0 + i * 1000,
      };
      items.push(it);
      await insertMedia(db, stillImageRow(it));
    } finally {
      await db.close();
    }
  }
  /** What dana sees for a search: her own items and erin's public ones, by substring, newest first. */
  function expected(search: string, sort: 'newest' | 'oldest', limit: number, page: number) {
    const found = items
      .filter((m) => (m.user === 'dana' || m.isPublic === 1) && m.prompt.toLowerCase().includes(search.toLowerCase()))
      .sort((a, b) => (sort === 'newest' ? b.at - a.at : a.at - b.at));
    return { total: found.length, ids: found.slice(page * limit, page * limit + limit).map((m) => m.id) };
  }
  beforeAll(async () => {
    s = await startTestService();
    dana = await s.client('dana', 'enterprise');
    for (let i = 0; i < 90; i++) await add(i);
  });
  afterAll(async () => {
    await s.stop();
  });

  it('every page matches a scan, the same page again, its neighbours, before and after new items', async () => {
    const pages = [6, 6, 7, 5, 11, 0, 11, 3];
    for (let round = 0; round < 3; round++) {
      for (const search of ['', 'ox', 'O', 'é', 'fox', 'n 1']) {
        for (const sort of ['newest', 'oldest'] as const) {
          for (const page of pages) {
            const q = `?limit=4&page=${page}&sort=${sort}${search ? `&search=${encodeURIComponent(search)}` : ''}`;
            const got = await list(dana, q);
            expect({ total: got.total, ids: got.medias.map((m) => m.id) }, q).toEqual(expected(search, sort, 4, page));
          }
        }
      }
      // New items shift every position: nothing remembered before may be served now.
      await add(1000 + round * 2);
      await add(1001 + round * 2);
    }
  });
});

/** A one-pixel still image's row: the listing reads only its owner, prompt, visibility and time. */
function stillImageRow(it: { id: string; user: string; prompt: string; isPublic: number; at: number }) {
  return {
    id: it.id,
    user_id: it.user,
    key_id: null,
    kind: 'image' as const,
    model: 'clipdesk/still',
    model_version: '1.0',
    provider_id: 'local-swift',
    provider_slug: 'swift',
    provider_name: 'Local Swift',
    prompt: it.prompt,
    size: '512x512',
    duration: 0,
    width: 1,
    height: 1,
    mime: 'image/png',
    files: [{ name: 'image.png', mime: 'image/png', bytes: 1 }],
    thumbnail: null,
    bytes: 1,
    price: 0,
    public: it.isPublic,
    created_at: it.at,
    expires_at: null,
  };
}
