import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../../shared/node/migrations.ts';
import { openSqlite } from '../../../../shared/node/sqlite.ts';
import { openDatabase, openServiceDatabase } from '../../../../server/storage/db.ts';
import { SERVICE_MIGRATIONS } from '../../../../server/storage/sqlite-migrations.ts';
import { postgresUnavailable, startPostgres } from '../../../support/postgres.ts';
import type { PrivatePostgres } from '../../../support/postgres.ts';
import { PG_MIGRATIONS } from '../../../../server/storage/pg/migrate.ts';
import { PostgresSql } from '../../../../server/storage/sql/postgres.ts';
import { promptSample, wordsToIndex } from '../../../../server/storage/media-search-words.ts';
import { SqliteSql } from '../../../../server/storage/sql/sqlite.ts';
import type { Db } from '../../../../server/storage/db.ts';
import { insertMedia, listMedia, planRead } from '../../../../server/storage/media-repo.ts';
import type { NewMedia } from '../../../../server/storage/media-repo.ts';
import type { ResolvedMediaFilters } from '../../../../server/storage/media-rows.ts';

/**
 * `GET /media`'s listing against a plain reference (filter, sort by (created_at, seq), slice) on
 * random libraries: the find index, the order key and the counters must give exactly what a scan
 * of the rows gives, whatever the filters, page or sort, after deletes and updates too.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'media-list-'));
  dirs.push(dir);
  return dir;
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

const USERS = ['ann', 'bo', 'cy'];
const WORDS = ['Red', 'fox', 'sun"set', 'a*b', 'NEAR', 'x-y', '%_', 'é', '\u0001', '\u007f', 'q'];
const T0 = Date.UTC(2026, 0, 1);

function item(r: ReturnType<typeof random>, i: number): NewMedia {
  const kind = r.pick(['video', 'image'] as const);
  const model = r.pick(['clipdesk/motion', 'clipdesk/drift']);
  const words = Array.from({ length: Math.floor(r.next() * 4) }, () => r.pick(WORDS));
  return {
    id: `med_${String(i).padStart(24, '0')}`,
    user_id: r.pick(USERS),
    key_id: null,
    kind,
    model,
    model_version: r.pick(['1.0', '1.1']),
    provider_id: r.pick(['local-swift', 'local-studio']),
    provider_slug: 'x',
    provider_name: 'X',
    // Empty, one- and two-character prompts too (uploads have none).
    prompt: words.join(r.pick([' ', ''])),
    size: r.pick(['360p', '720p']),
    duration: 1,
    width: 1,
    height: 1,
    mime: 'video/mp4',
    files: [],
    thumbnail: null,
    bytes: 1,
    price: 0,
    public: r.next() < 0.5 ? 1 : 0,
    // Few distinct times, so many items tie and the tiebreak matters.
    created_at: T0 + Math.floor(r.next() * 20) * 1000,
    expires_at: null,
  };
}

interface Row {
  seq: number;
  id: string;
  user_id: string;
  public: number;
  kind: string;
  size: string;
  model: string;
  model_version: string;
  provider_id: string;
  prompt: string;
  created_at: number;
}

async function reference(db: Db, f: ResolvedMediaFilters, limit: number, page: number) {
  const rows = (await db.all<Row>('SELECT * FROM media')).filter(
    (m) =>
      (m.user_id === f.viewer || m.public === 1) &&
      (f.user === undefined || m.user_id === f.user) &&
      (f.media === undefined || m.kind === f.media) &&
      (f.size === undefined || m.size === f.size) &&
      (f.model === undefined || m.model === f.model) &&
      (f.modelVersion === undefined || m.model_version === f.modelVersion) &&
      (f.providerId === undefined || m.provider_id === f.providerId) &&
      (f.search === undefined || m.prompt.toLowerCase().includes(f.search.toLowerCase())),
  );
  const sign = f.sort === 'oldest' ? 1 : -1;
  rows.sort((a, b) => sign * (a.created_at - b.created_at || a.seq - b.seq));
  return { total: rows.length, ids: rows.slice(page * limit, page * limit + limit).map((m) => m.id) };
}

function randomQuery(r: ReturnType<typeof random>): ResolvedMediaFilters {
  const maybe = <T>(xs: readonly T[]): T | undefined => (r.next() < 0.3 ? r.pick(xs) : undefined);
  const viewer = r.pick([...USERS, 'nobody']);
  const f: ResolvedMediaFilters = { viewer, sort: r.pick(['newest', 'oldest'] as const) };
  const user = maybe([...USERS, viewer, 'nobody']);
  if (user !== undefined) f.user = user;
  const media = maybe(['video', 'image'] as const);
  if (media !== undefined) f.media = media;
  const size = maybe(['360p', '720p', '1080p']);
  if (size !== undefined) f.size = size;
  const model = maybe(['clipdesk/motion', 'clipdesk/drift', 'other/model']);
  if (model !== undefined) {
    f.model = model;
    const version = maybe(['1.0', '1.1']);
    if (version !== undefined) f.modelVersion = version;
  }
  const provider = maybe(['local-swift', 'local-studio', '\u0000']);
  if (provider !== undefined) f.providerId = provider;
  const search = maybe([
    're',
    'R',
    'fox',
    'RED FOX',
    'ox',
    '"',
    'n"s',
    'a*',
    '*',
    'NEAR',
    '-',
    'x-y',
    '%',
    '_',
    'é',
    'É',
    '\u0001',
    '\u007f',
    'q',
    'qq',
    'redfox',
    ' ',
    'zzz',
  ]);
  if (search !== undefined) f.search = search;
  return f;
}

async function check(db: Db, r: ReturnType<typeof random>, queries: number): Promise<void> {
  for (let q = 0; q < queries; q++) {
    const f = randomQuery(r);
    const limit = r.pick([1, 3, 7, 25]);
    const page = r.pick([0, 0, 1, 2, 5, 11, 40]);
    const got = await listMedia(db, f, limit, page);
    const want = await reference(db, f, limit, page);
    expect({ total: got.total, ids: got.rows.map((m) => m.id) }, JSON.stringify({ f, limit, page })).toEqual(want);
  }
}

/**
 * Deep pages, the same page again and its neighbours (what remembered anchors and totals serve),
 * with writes now and then that must make the listing forget them: inserts, deletes, items made
 * public or private, and prompts changed under a search (nothing else changes then).
 */
async function anchoredPages(db: Db, r: ReturnType<typeof random>): Promise<void> {
  await db.transaction(async (tx) => {
    for (let i = 0; i < 400; i++) await insertMedia(tx, item(r, i));
  });
  const listings: ResolvedMediaFilters[] = [
    { viewer: 'ann', sort: 'newest' },
    { viewer: 'ann', sort: 'oldest' },
    { viewer: 'bo', user: 'bo', sort: 'oldest', media: 'video' },
    { viewer: 'cy', search: 'fox', sort: 'newest' },
    { viewer: 'ann', user: 'bo', search: 'ox', sort: 'oldest' },
    { viewer: 'bo', search: 'e', model: 'clipdesk/drift', sort: 'newest' },
  ];
  let next = 400;
  for (let step = 0; step < 600; step++) {
    const f = r.pick(listings);
    const limit = r.pick([3, 7]);
    const pages = Math.ceil((await reference(db, f, limit, 0)).total / limit) + 1;
    const page = Math.floor(r.next() * pages);
    for (const p of [page, page, page + 1, Math.max(0, page - 1)]) {
      const got = await listMedia(db, f, limit, p);
      expect({ total: got.total, ids: got.rows.map((m) => m.id) }, JSON.stringify({ f, limit, p, step })).toEqual(
        await reference(db, f, limit, p),
      );
    }
    if (step % 37 === 0) await insertMedia(db, item(r, next++));
    if (step % 53 === 0) await db.run('DELETE FROM media WHERE seq = (SELECT min(seq) FROM media)');
    if (step % 71 === 0) await db.run('UPDATE media SET public = 1 - public WHERE seq % 7 = ?', step % 7);
    if (step % 29 === 0) {
      await db.run(
        'UPDATE media SET prompt = ? WHERE seq = (SELECT min(seq) FROM media WHERE seq % 5 = ?)',
        r.pick(['fox', 'box', 'none', 'Oxen']),
        step % 5,
      );
    }
  }
}

describe('listMedia', () => {
  it('matches a scan of the rows for random filters, searches, sorts and pages', async () => {
    const db = openDatabase(tempDir());
    const r = random(7);
    await db.transaction(async (tx) => {
      for (let i = 0; i < 300; i++) await insertMedia(tx, item(r, i));
    });
    await check(db, r, 400);
    // Deletes (retention) and updates keep the index and counters exact.
    await db.run('DELETE FROM media WHERE seq % 3 = 0');
    await db.run('UPDATE media SET public = 1 - public, prompt = prompt || ? WHERE seq % 5 = 1', ' fox');
    for (let i = 300; i < 340; i++) await insertMedia(db, item(r, i));
    await check(db, r, 400);
    await db.close();
  });

  it('pages read from anchors match the reference, in any order, across writes', async () => {
    const db = openDatabase(tempDir());
    await anchoredPages(db, random(19));
    await db.close();
  });

  it('a page is read from the nearest end or anchor', () => {
    // 1,000 positions, counted oldest first.
    expect(planRead(undefined, 1000, 400, 424)).toEqual({ ascending: true, skip: 400 });
    expect(planRead(undefined, 1000, 700, 724)).toEqual({ ascending: false, skip: 275 });
    const anchors = new Map([
      [480, 4800],
      [560, 5600],
      [100, 1000],
    ]);
    expect(planRead(anchors, 1000, 500, 524)).toEqual({ ascending: true, bound: 4800, skip: 20 });
    expect(planRead(anchors, 1000, 530, 549)).toEqual({ ascending: false, bound: 5600, skip: 11 });
    // The page itself: no step at all.
    expect(planRead(new Map([[500, 5000]]), 1000, 500, 524)).toEqual({ ascending: true, bound: 5000, skip: 0 });
  });

  it('a database written before version 3 is indexed by the migration', async () => {
    const dir = tempDir();
    const old = openSqlite(join(dir, 'service.db'));
    migrate(
      old,
      'v1',
      SERVICE_MIGRATIONS.filter((m) => m.version === 1),
    );
    const r = random(11);
    const v1 = new SqliteSql(old, 'v1');
    for (let i = 0; i < 200; i++) await insertMedia(v1, item(r, i));
    await v1.close();
    const db = openDatabase(dir);
    await check(db, r, 300);
    await db.close();
  });

  it('a millisecond holds at most 1,024 items, and the 1,025th is refused rather than misordered', async () => {
    const db = openDatabase(tempDir());
    const r = random(3);
    await db.transaction(async (tx) => {
      for (let i = 0; i < 1024; i++) await insertMedia(tx, { ...item(r, i), created_at: T0 });
    });
    await expect(insertMedia(db, { ...item(r, 5000), created_at: T0 })).rejects.toThrow(/1024 media items/);
    await insertMedia(db, { ...item(r, 5001), created_at: T0 + 1 });
    await check(db, r, 50);
    await db.close();
  });
});

/** The same reference check against PostgreSQL's listing (media-list-postgres.ts, schema-v2.sql, schema-v5.sql). */
const noPostgres = postgresUnavailable();
describe.skipIf(noPostgres !== null)('listMedia on PostgreSQL', () => {
  let cluster: PrivatePostgres;
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(async () => {
    await cluster.stop();
  });

  it('matches a scan of the rows for random filters, searches, sorts and pages', async () => {
    const db = await openServiceDatabase({ kind: 'postgres', url: await cluster.createDatabase('listing') });
    try {
      const r = random(7);
      await db.transaction(async (tx) => {
        for (let i = 0; i < 300; i++) await insertMedia(tx, item(r, i));
      });
      await check(db, r, 400);
      await db.run('DELETE FROM media WHERE seq % 3 = 0');
      await db.run('UPDATE media SET public = 1 - public, prompt = prompt || ? WHERE seq % 5 = 1', ' fox');
      for (let i = 300; i < 340; i++) await insertMedia(db, item(r, i));
      await check(db, r, 400);
    } finally {
      await db.close();
    }
  });

  it('pages read from anchors and remembered totals match the reference, in any order, across writes', async () => {
    const db = await openServiceDatabase({ kind: 'postgres', url: await cluster.createDatabase('anchors') });
    try {
      await anchoredPages(db, random(19));
    } finally {
      await db.close();
    }
  });

  it('a listing remembered by one node is not served stale after another node writes', async () => {
    const url = await cluster.createDatabase('two_nodes');
    const a = await openServiceDatabase({ kind: 'postgres', url });
    const b = await openServiceDatabase({ kind: 'postgres', url });
    try {
      const r = random(23);
      for (let i = 0; i < 120; i++) await insertMedia(a, item(r, i));
      const listings: ResolvedMediaFilters[] = [
        { viewer: 'ann', search: 'fox', sort: 'newest' },
        { viewer: 'ann', search: 'ox', sort: 'oldest' },
        { viewer: 'bo', user: 'bo', sort: 'oldest' },
      ];
      for (let step = 0; step < 60; step++) {
        for (const f of listings) {
          for (const p of [0, 2, 2]) {
            const got = await listMedia(a, f, 5, p);
            expect({ total: got.total, ids: got.rows.map((m) => m.id) }, JSON.stringify({ f, p, step })).toEqual(
              await reference(a, f, 5, p),
            );
          }
        }
        // Node B writes; node A must see it on its next read.
        if (step % 3 === 0) await insertMedia(b, item(r, 200 + step));
        if (step % 3 === 1) await b.run('UPDATE media SET prompt = prompt || ? WHERE seq % 11 = ?', ' fox', step % 11);
        if (step % 3 === 2) await b.run('DELETE FROM media WHERE seq = (SELECT max(seq) FROM media WHERE seq % 2 = 0)');
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a search with a common word looks for its rare words and matches exactly as the whole search', async () => {
    const db = await openServiceDatabase({ kind: 'postgres', url: await cluster.createDatabase('common_words') });
    try {
      const r = random(31);
      // "number" in every prompt (in any case), a three-digit number in each, WORDS now and then.
      await db.transaction(async (tx) => {
        for (let i = 0; i < 400; i++) {
          const prompt = `${r.pick(['number', 'Number', 'NUMBER'])} ${100 + (i % 350)} ${r.next() < 0.3 ? r.pick(WORDS) : ''}`;
          await insertMedia(tx, { ...item(r, i), prompt });
        }
      });
      await db.run('ANALYZE media');
      // The statistics say "number" is common: the rewrite is what this test exercises.
      const sample = await promptSample(db);
      expect(wordsToIndex('number 123', sample)).toEqual(['123']);
      expect(wordsToIndex('123 456', sample)).toBeNull();
      const searches = [
        'number 123',
        'NUMBER 123 ',
        'number 123 fox',
        '123 number',
        'umber 12',
        'number 1%3',
        'number 1_3',
        'number 123 a*b',
        'Number  123',
        'number 449 x-y',
        'number 999',
        'number number',
      ];
      for (const search of searches) {
        for (const viewer of USERS) {
          const f: ResolvedMediaFilters = { viewer, search, sort: r.pick(['newest', 'oldest'] as const) };
          for (const page of [0, 1]) {
            const got = await listMedia(db, f, 3, page);
            expect({ total: got.total, ids: got.rows.map((m) => m.id) }, JSON.stringify(f)).toEqual(
              await reference(db, f, 3, page),
            );
          }
        }
      }
    } finally {
      await db.close();
    }
  });

  it('one- and two-character searches through the grams index, lowering that lengthens included', async () => {
    const db = await openServiceDatabase({ kind: 'postgres', url: await cluster.createDatabase('grams') });
    try {
      const r = random(5);
      // 'İ' lowers to two characters ('i' and a combining dot): a two-character search can be three.
      const prompts = ['İx', 'i\u0307x', 'ix', 'x', 'Xİ', 'ab', 'ba', 'AB c', '', 'é', 'É'];
      await db.transaction(async (tx) => {
        for (let i = 0; i < 60; i++) await insertMedia(tx, { ...item(r, i), prompt: prompts[i % prompts.length]! });
      });
      for (const search of ['İ', 'İx', 'i', 'ix', 'x', 'X', 'ab', 'b', 'c', ' ', 'É', 'é', 'zz']) {
        for (const viewer of USERS) {
          for (const page of [0, 1]) {
            const f: ResolvedMediaFilters = { viewer, search, sort: 'newest' };
            const got = await listMedia(db, f, 4, page);
            expect({ total: got.total, ids: got.rows.map((m) => m.id) }, JSON.stringify(f)).toEqual(
              await reference(db, f, 4, page),
            );
          }
        }
      }
    } finally {
      await db.close();
    }
  });

  it('a database written before version 5 has its counters filled by the migration', async () => {
    const url = await cluster.createDatabase('before_counters');
    // Versions 1 to 4 as migratePostgres applies them, then rows written by a build of that time.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)');
      for (const step of PG_MIGRATIONS.filter((m) => m.version <= 4)) {
        await client.query(
          readFileSync(new URL(`../../../../server/storage/pg/${step.file}`, import.meta.url), 'utf8'),
        );
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [step.version, step.name]);
      }
    } finally {
      await client.end();
    }
    const r = random(11);
    const old = new PostgresSql(url, 'the test database');
    try {
      for (let i = 0; i < 120; i++) await insertMedia(old, item(r, i));
    } finally {
      await old.close();
    }
    const db = await openServiceDatabase({ kind: 'postgres', url });
    try {
      await check(db, r, 200);
    } finally {
      await db.close();
    }
  });
});
