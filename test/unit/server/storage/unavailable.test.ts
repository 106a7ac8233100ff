import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUnavailable, sqliteUnavailable } from '../../../../server/storage/sql/unavailable.ts';

/**
 * Which driver errors mean the database failed (503 with Retry-After) and which are the statement's
 * own (500): the SQLite ones are made by a real database; the PostgreSQL ones are the driver's own
 * error class with the SQLSTATE the server sends.
 */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
}

describe('SQLite', () => {
  let dir: string;
  let a: DatabaseSync;
  let b: DatabaseSync;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-unavailable-'));
    a = new DatabaseSync(join(dir, 'x.db'));
    b = new DatabaseSync(join(dir, 'x.db'));
    a.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER PRIMARY KEY)');
    b.exec('PRAGMA busy_timeout = 50');
  });
  afterAll(async () => {
    a.close();
    b.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the write lock held past the busy timeout is unavailable', () => {
    a.exec('BEGIN IMMEDIATE');
    try {
      expect(sqliteUnavailable(thrown(() => b.exec('INSERT INTO t VALUES (1)')))).toBe(true);
    } finally {
      a.exec('ROLLBACK');
    }
  });

  it('a syntax error and a constraint are the statement’s own', () => {
    expect(sqliteUnavailable(thrown(() => a.exec('SELEC 1')))).toBe(false);
    a.exec('INSERT INTO t VALUES (7)');
    expect(sqliteUnavailable(thrown(() => a.exec('INSERT INTO t VALUES (7)')))).toBe(false);
    expect(sqliteUnavailable(new Error('plain'))).toBe(false);
  });
});

describe('PostgreSQL', () => {
  const serverError = (code: string): Error => {
    const error = new pg.DatabaseError('server said no', 0, 'error');
    error.code = code;
    return error;
  };

  it('connection-level SQLSTATEs, socket errors and lost connections are unavailable', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', '53100', '58030'])
      expect(postgresUnavailable(serverError(code)), code).toBe(true);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(postgresUnavailable(refused)).toBe(true);
    expect(postgresUnavailable(new AggregateError([refused], ''))).toBe(true);
    expect(postgresUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(postgresUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('constraints, syntax, bad values and cancelled statements are the statement’s own', () => {
    for (const code of ['23505', '23503', '42601', '42P01', '22P02', '40001', '57014'])
      expect(postgresUnavailable(serverError(code)), code).toBe(false);
    expect(postgresUnavailable(new Error('plain'))).toBe(false);
    expect(postgresUnavailable('not an error')).toBe(false);
  });
});
