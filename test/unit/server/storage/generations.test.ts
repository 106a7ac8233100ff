import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from '../../../../shared/node/migrations.ts';
import { openSqlite } from '../../../../shared/node/sqlite.ts';
import { openDatabase } from '../../../../server/storage/db.ts';
import { SERVICE_MIGRATIONS } from '../../../../server/storage/sqlite-migrations.ts';
import {
  completeGeneration,
  endGeneration,
  generationByIdempotencyKey,
  getGeneration,
  insertGeneration,
  listGenerations,
  openGenerations,
  toGeneration,
  updateGenerationStep,
} from '../../../../server/storage/generations.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'clipdesk-generations-'));
  dirs.push(d);
  return d;
}

const T0 = Date.UTC(2026, 0, 1);
const BODY = {
  success: true as const,
  data: [],
  price: 0.25,
  stats: { setupTime: 0, processingTime: 1, generationTime: 2, retries: 0, providerId: 'clipdesk' },
};

async function add(
  db: ReturnType<typeof openDatabase>,
  id: string,
  key = 'key_a',
  at = T0,
  idem?: string,
  synchronous = false,
): Promise<boolean> {
  return await insertGeneration(db, {
    id,
    // key_b is another account's key.
    user_id: key === 'key_b' ? 'bo' : 'ann',
    key_id: key,
    operation: 'videos.generations',
    request: JSON.stringify({ model: 'clipdesk/motion', prompt: id }),
    webhook_url: null,
    created_at: at,
    ...(idem !== undefined ? { idempotency: { key: idem, fingerprint: 'f' } } : {}),
    synchronous,
  });
}

describe('generations (schema version 5)', () => {
  it('a version 4 database gains the table, provider_jobs.generation_id and media.variation_of', async () => {
    const dir = tempDir();
    const old = openSqlite(join(dir, 'service.db'));
    migrate(
      old,
      'v4',
      SERVICE_MIGRATIONS.filter((m) => m.version <= 4),
    );
    expect(schemaVersion(old)).toBe(4);
    old.close();
    const db = openDatabase(dir);
    expect(schemaVersion(db.raw)).toBeGreaterThanOrEqual(5);
    const columns = async (table: string) =>
      (await db.all<{ name: string }>(`PRAGMA table_info(${table})`)).map((c) => c.name);
    expect(await columns('provider_jobs')).toContain('generation_id');
    expect(await columns('media')).toContain('variation_of');
    expect(await columns('generations')).toEqual(
      expect.arrayContaining(['id', 'status', 'request', 'result', 'error']),
    );
    await db.close();
  });

  it('steps move an open generation only; the first final state wins; lists are per account, newest first', async () => {
    const db = openDatabase(tempDir());
    await add(db, 'gen_1', 'key_a', T0);
    await add(db, 'gen_2', 'key_a', T0 + 1, 'idem-1');
    await add(db, 'gen_3', 'key_b', T0 + 2);
    await updateGenerationStep(db, 'gen_1', 'queued', T0 + 5, { queuePosition: 3 });
    expect(toGeneration((await getGeneration(db, 'gen_1'))!)).toMatchObject({ status: 'queued', queuePosition: 3 });
    await updateGenerationStep(db, 'gen_1', 'generating', T0 + 6, { progress: 0.5 });
    const running = toGeneration((await getGeneration(db, 'gen_1'))!);
    expect(running).toMatchObject({ status: 'generating', progress: 0.5 });
    expect(running.queuePosition).toBeUndefined();
    // A step never goes back: the second video of a variation transcodes after the first's thumbnail.
    await updateGenerationStep(db, 'gen_1', 'thumbnail', T0 + 6);
    await updateGenerationStep(db, 'gen_1', 'transcoding', T0 + 6);
    await updateGenerationStep(db, 'gen_1', 'queued', T0 + 6, { queuePosition: 1 });
    expect(toGeneration((await getGeneration(db, 'gen_1'))!).status).toBe('thumbnail');

    await completeGeneration(db, 'gen_1', BODY, T0 + 7);
    expect(await endGeneration(db, 'gen_1', 'canceled', { type: 'canceled', message: 'late' }, T0 + 8)).toBe(false);
    await updateGenerationStep(db, 'gen_1', 'storing', T0 + 9);
    const done = toGeneration((await getGeneration(db, 'gen_1'))!);
    expect(done).toMatchObject({ status: 'succeeded', price: 0.25, stats: { providerId: 'clipdesk' }, data: [] });
    expect(done.error).toBeUndefined();

    expect(await endGeneration(db, 'gen_2', 'failed', { type: 'provider_unavailable', message: 'down' }, T0 + 10)).toBe(
      true,
    );
    expect(toGeneration((await getGeneration(db, 'gen_2'))!).error).toEqual({
      type: 'provider_unavailable',
      message: 'down',
    });
    expect((await generationByIdempotencyKey(db, 'ann', 'idem-1'))?.id).toBe('gen_2');
    // A key the account used already inserts nothing (the caller follows that generation).
    expect(await add(db, 'gen_4', 'key_a', T0, 'idem-1')).toBe(false);
    expect(await getGeneration(db, 'gen_4')).toBeUndefined();

    expect((await openGenerations(db)).map((g) => g.id)).toEqual(['gen_3']);
    expect(await listGenerations(db, 'ann', undefined, 10, 0)).toMatchObject({ total: 2 });
    expect((await listGenerations(db, 'ann', undefined, 10, 0)).rows.map((r) => r.id)).toEqual(['gen_2', 'gen_1']);
    expect((await listGenerations(db, 'ann', undefined, 1, 1)).rows.map((r) => r.id)).toEqual(['gen_1']);
    expect((await listGenerations(db, 'ann', 'failed', 10, 0)).rows.map((r) => r.id)).toEqual(['gen_2']);
    // A synchronous request's generation (PostgreSQL's queue) is not listed.
    expect(await add(db, 'gen_sync', 'key_a', T0 + 5_000, undefined, true)).toBe(true);
    expect((await listGenerations(db, 'ann', undefined, 10, 0)).rows.map((r) => r.id)).toEqual(['gen_2', 'gen_1']);
    expect((await listGenerations(db, 'bo', 'failed', 10, 0)).total).toBe(0);
    await db.close();
  });
});
