import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSql } from '../../../server/storage/sql/postgres.ts';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { onPostgres } from './helpers.ts';

/**
 * The PostgreSQL statement layer (server/storage/sql/postgres.ts): statements are prepared once
 * per connection under a name, and a prepared statement the server refuses or has forgotten is
 * run again unnamed, so neither a schema change by another node nor a statement pooler breaks a
 * running node.
 */
const unavailable = postgresUnavailable();

let cluster: PrivatePostgres;
beforeAll(async () => {
  if (!unavailable) cluster = await startPostgres();
});
afterAll(async () => {
  await cluster?.stop();
});

async function admin(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// The PostgreSQL pass skips this file: it starts a cluster of its own and already runs in the SQLite pass.
describe.skipIf(unavailable !== null || onPostgres)('statements on PostgreSQL', () => {
  it('are prepared once per connection and reused', async () => {
    const url = await cluster.createDatabase('statements_prepared');
    const db = new PostgresSql(url, 'the test database', { max: 1 });
    try {
      const text = 'SELECT ? + 1 AS n /* prepared-once */';
      for (let i = 0; i < 3; i++) expect(await db.get<{ n: number }>(text, i)).toEqual({ n: i + 1 });
      const held = await db.all<{ statement: string }>(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%prepared-once%' AND statement NOT LIKE '%pg_prepared_statements%'",
      );
      expect(held).toHaveLength(1);
      // Bound values, not text: a new value is not a new statement.
      expect(held[0]!.statement).toContain('$1');
    } finally {
      await db.close();
    }
  });

  it('a prepared SELECT * still answers after another node added a column (run again unnamed)', async () => {
    const url = await cluster.createDatabase('statements_migrated');
    await admin(url, 'CREATE TABLE things (id integer PRIMARY KEY)');
    await admin(url, 'INSERT INTO things VALUES (1)');
    const db = new PostgresSql(url, 'the test database', { max: 1 });
    try {
      expect(await db.all('SELECT * FROM things')).toEqual([{ id: 1 }]);
      // Another node's migration: PostgreSQL now refuses the prepared statement's old row type.
      await admin(url, 'ALTER TABLE things ADD COLUMN label text');
      expect(await db.all('SELECT * FROM things')).toEqual([{ id: 1, label: null }]);
      expect(await db.all('SELECT * FROM things')).toEqual([{ id: 1, label: null }]);
      // Unnamed from then on: a further change is answered too.
      await admin(url, 'ALTER TABLE things ADD COLUMN size integer');
      expect(await db.all('SELECT * FROM things')).toEqual([{ id: 1, label: null, size: null }]);
    } finally {
      await db.close();
    }
  });

  it('a name the backend already holds (a pooler gave the client a backend its node prepared on) runs again', async () => {
    const url = await cluster.createDatabase('statements_taken');
    const db = new PostgresSql(url, 'the test database', { max: 1 });
    try {
      expect(await db.get<{ n: number }>('SELECT ? + 0 AS n /* first */', 1)).toEqual({ n: 1 });
      const [first] = await db.all<{ name: string }>(
        "SELECT name FROM pg_prepared_statements WHERE statement LIKE '%/* first */%' AND statement NOT LIKE '%pg_prepared%'",
      );
      // The process's own names, numbered in order of first use: `<prefix>N`.
      const match = /^(clipdesk_[0-9a-f]{8}_)(\d+)$/.exec(first!.name);
      expect(match).not.toBeNull();
      const next = (k: number): string => `${match![1]}${Number(match![2]) + k}`;
      // The PREPARE below is itself the next named text (n+1); the backend then holds n+3 before
      // this client parses it for the text after the pg_prepared_statements read (n+2).
      await db.run(`PREPARE ${next(3)} AS SELECT 1`);
      expect(await db.get<{ n: number }>('SELECT ? + 0 AS n /* second */', 2)).toEqual({ n: 2 });
      expect(await db.get<{ n: number }>('SELECT ? + 0 AS n /* third */', 3)).toEqual({ n: 3 });
      expect(await db.get<{ n: number }>('SELECT ? + 0 AS n /* third */', 4)).toEqual({ n: 4 });
    } finally {
      await db.close();
    }
  });

  it('a statement the server forgot (a pooler gave the client another backend) runs again', async () => {
    const url = await cluster.createDatabase('statements_forgotten');
    const db = new PostgresSql(url, 'the test database', { max: 1 });
    try {
      const text = 'SELECT ? * 2 AS n /* forgotten */';
      expect(await db.get<{ n: number }>(text, 2)).toEqual({ n: 4 });
      // What a transaction-mode pooler does to the client: the server side no longer has it.
      await db.run('DEALLOCATE ALL');
      expect(await db.get<{ n: number }>(text, 3)).toEqual({ n: 6 });
      expect(await db.get<{ n: number }>(text, 4)).toEqual({ n: 8 });
    } finally {
      await db.close();
    }
  });

  it('a transaction stalled between statements is ended by the server, and its locks with it', async () => {
    const url = await cluster.createDatabase('statements_stalled');
    // What a node paused mid-transaction does to the others: here the pause is an await that never
    // sends the next statement until long after the limit.
    const stalled = new PostgresSql(url, 'the test database', { max: 1, idleInTransactionMs: 300 });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      let resume!: () => void;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      const transaction = stalled.transaction(async (tx) => {
        await tx.run('SELECT pg_advisory_xact_lock(4711)');
        holding();
        await paused;
        return tx.get('SELECT 1 AS n');
      });
      transaction.catch(() => undefined);
      await held;
      // Without the limit this waits for the paused transaction for ever; lock_timeout turns that
      // into a failure of the test instead of a hang.
      await other.query("SET lock_timeout = '20s'");
      await other.query('SELECT pg_advisory_xact_lock(4711)');
      resume();
      await expect(transaction).rejects.toThrow();
      // The pool gave up that connection; the next transaction gets a fresh one and works.
      expect(await stalled.transaction((tx) => tx.get<{ n: number }>('SELECT 2 AS n'))).toEqual({ n: 2 });
    } finally {
      await other.end();
      await stalled.close();
    }
  });
});
