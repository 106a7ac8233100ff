import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { numberedPlaceholders } from '../../../../server/storage/sql/dialect.ts';
import { PostgresSql } from '../../../../server/storage/sql/postgres.ts';
import { SqliteSql } from '../../../../server/storage/sql/sqlite.ts';
import { postgresUnavailable, startPostgres } from '../../../support/postgres.ts';

function memory(): SqliteSql {
  const db = new SqliteSql(new DatabaseSync(':memory:'), 'a test database');
  db.raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  return db;
}

describe('placeholders', () => {
  it('numbers ? for PostgreSQL, leaving quoted text, quoted names and comments alone', () => {
    expect(numberedPlaceholders(`SELECT '?' AS "a?", x FROM t WHERE a = ? AND b = ? -- why?\nAND c = ?`)).toBe(
      `SELECT '?' AS "a?", x FROM t WHERE a = $1 AND b = $2 -- why?\nAND c = $3`,
    );
    expect(numberedPlaceholders("SELECT 'it''s ?' WHERE x = ?")).toBe("SELECT 'it''s ?' WHERE x = $1");
  });
});

describe('SqliteSql', () => {
  it('a transaction is all or nothing, and a nested one is a savepoint', async () => {
    const db = memory();
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t (v) VALUES (?)', 'kept?');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t (v) VALUES (?)', 'outer');
      await tx
        .transaction(async (inner) => {
          await inner.run('INSERT INTO t (v) VALUES (?)', 'inner');
          throw new Error('inner only');
        })
        .catch(() => undefined);
    });
    expect(await db.all('SELECT v FROM t')).toEqual([{ v: 'outer' }]);
    await db.close();
  });

  it('statements from outside wait for an open transaction, which sees none of them', async () => {
    const db = memory();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const tx = db.transaction(async (t) => {
      await t.run('INSERT INTO t (v) VALUES (?)', 'in the transaction');
      await held;
      order.push(`inside sees ${(await t.all('SELECT v FROM t')).length}`);
    });
    const outside = db.run('INSERT INTO t (v) VALUES (?)', 'outside').then(() => order.push('outside ran'));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    release();
    await Promise.all([tx, outside]);
    expect(order).toEqual(['inside sees 1', 'outside ran']);
    expect((await db.all('SELECT v FROM t')).length).toBe(2);
    await db.close();
  });

  it('a statement sent to the database from inside its own transaction throws instead of waiting forever', async () => {
    const db = memory();
    await expect(
      db.transaction(async () => {
        await db.get('SELECT 1 AS x');
      }),
    ).rejects.toThrow(/pass the transaction handle/);
    // The database is usable afterwards, and a handle kept past its transaction is refused.
    let kept: Parameters<Parameters<SqliteSql['transaction']>[0]>[0] | undefined;
    await db.transaction(async (tx) => {
      kept = tx;
      await tx.get('SELECT 1 AS x');
    });
    await expect(kept!.get('SELECT 1 AS x')).rejects.toThrow(/ended/);
    expect(await db.get('SELECT 2 AS x')).toEqual({ x: 2 });
    await db.close();
  });
});

const noPostgres = postgresUnavailable();
describe.skipIf(noPostgres !== null)('PostgresSql', () => {
  it('reads BIGINT and NUMERIC as numbers, counts changes, and rolls a failed transaction back', async () => {
    const cluster = await startPostgres();
    const db = new PostgresSql(await cluster.createDatabase('layer'), 'a test database');
    try {
      await db.run('CREATE TABLE t (id BIGINT PRIMARY KEY, bytes BIGINT NOT NULL, price DOUBLE PRECISION NOT NULL)');
      await db.run('INSERT INTO t (id, bytes, price) VALUES (?, ?, ?), (?, ?, ?)', 1, 2 ** 40, 0.25, 2, 5, 0.5);
      expect(await db.get('SELECT count(*) AS n, sum(bytes) AS total, sum(price) AS cost FROM t')).toEqual({
        n: 2,
        total: 2 ** 40 + 5,
        cost: 0.75,
      });
      expect((await db.run('UPDATE t SET bytes = bytes + 1 WHERE id >= ?', 1)).changes).toBe(2);
      await expect(
        db.transaction(async (tx) => {
          await tx.run('DELETE FROM t WHERE id = ?', 1);
          await tx.run('INSERT INTO t (id, bytes, price) VALUES (?, ?, ?)', 2, 0, 0);
        }),
      ).rejects.toThrow(/duplicate key/);
      expect((await db.all<{ id: number }>('SELECT id FROM t ORDER BY id')).map((r) => r.id)).toEqual([1, 2]);
    } finally {
      await db.close();
      await cluster.stop();
    }
  });
});
