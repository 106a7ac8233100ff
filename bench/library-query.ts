// Library queries (filters + FTS search + sort, keyset pages) over 100,000 indexed items: p95
// against the same queries answered with a LIKE scan of the prompt. Goal: p95 ≤ 16 ms.
import { createLibraryStore, openDatabase } from '../electron/core/library/index.ts';
import type { LibraryQuery } from '../electron/core/library/index.ts';
import type { MediaItem } from '../shared/api/index.ts';
import { percentile, reportFigure } from './support/report.ts';
import { syntheticLibraryItem } from '../test/support/synthetic-prompts.ts';

const ITEMS = 100_000;
const ROUNDS = 30;

const QUERIES: LibraryQuery[] = [
  { search: 'sunset' },
  { search: 'red fox', media: 'video', sort: 'oldest' },
  { search: 'lantern', model: 'clipdesk/motion', size: '720p' },
  { search: 'number 4242' },
  { search: 'glass', favourite: true },
  { search: 'orbit storm', downloaded: false, provider: 'local-swift' },
  { media: 'image', sort: 'oldest' },
  { expiringWithinMs: 3 * 86_400_000 },
];

export default function (): Promise<void> {
  const now = Date.UTC(2026, 0, 1);
  const store = createLibraryStore({ db: openDatabase(':memory:'), now: () => now, retentionDays: () => 30 });
  const batch: MediaItem[] = [];
  for (let i = 0; i < ITEMS; i++) {
    batch.push(syntheticLibraryItem(i, ITEMS, now));
    if (batch.length === 1000) store.upsert(batch.splice(0));
  }
  for (let i = 0; i < ITEMS; i += 37) store.setFavourite(`med_${i.toString(16).padStart(24, '0')}`, true);

  // The comparator: the same filters and order (rowid is time order), the search as LIKE '%word%'.
  const likeQuery = (q: LibraryQuery): number[] => {
    const where: string[] = [];
    const params: (string | number)[] = [];
    for (const word of (q.search ?? '').split(/\s+/).filter(Boolean)) {
      where.push('prompt LIKE ?');
      params.push(`%${word}%`);
    }
    if (q.media) {
      where.push('media = ?');
      params.push(q.media);
    }
    if (q.model) {
      where.push('(model = ? OR model_slug = ?)');
      params.push(q.model, q.model);
    }
    if (q.size) {
      where.push('size = ?');
      params.push(q.size);
    }
    if (q.provider) {
      where.push('provider = ?');
      params.push(q.provider);
    }
    if (q.favourite) where.push('favourite = 1');
    if (q.downloaded === false) where.push('downloaded_path IS NULL');
    if (q.expiringWithinMs) {
      where.push('lost_at IS NULL AND deadline <= ?');
      params.push(now + q.expiringWithinMs);
    }
    const dir = q.sort === 'oldest' ? 'ASC' : 'DESC';
    const sql = `SELECT * FROM library_items ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rowid ${dir} LIMIT 51`;
    const rows = store.db.prepare(sql).all(...params);
    return rows.map(() => 0);
  };

  const ours: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of QUERIES) {
      let t = performance.now();
      const first = store.query({ ...q, limit: 50 });
      if (first.nextCursor) store.query({ ...q, limit: 50, cursor: first.nextCursor });
      ours.push((performance.now() - t) / (first.nextCursor ? 2 : 1));
      t = performance.now();
      likeQuery(q);
      theirs.push(performance.now() - t);
    }
  }
  const p95 = percentile(ours, 95);
  reportFigure(
    'library-query-p95-100k',
    p95,
    'ms',
    p95 / percentile(theirs, 95),
    'the same queries with a LIKE scan (goal p95 ≤ 16 ms)',
  );
  reportFigure(
    'library-query-p50-100k',
    percentile(ours, 50),
    'ms',
    percentile(ours, 50) / percentile(theirs, 50),
    'LIKE scan p50',
  );
  return Promise.resolve();
}
