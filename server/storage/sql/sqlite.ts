import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Sql, SqlDatabase, SqlRunResult, SqlValue } from './types.ts';
import { DatabaseUnavailableError, sqliteUnavailable } from './unavailable.ts';

/**
 * The Sql interface over one node:sqlite connection (the embedded default).
 *
 * node:sqlite is synchronous: a statement runs to completion on the calling tick and its rows are
 * handed over as they are (no copy); the promise around them is the only cost. Statements are
 * prepared once per text and cached.
 *
 * A transaction's function awaits between its statements, so other requests run meanwhile on the
 * same connection. Their statements must not land inside it: while a transaction is open, every
 * statement that does not come through its handle waits until it ends (transactions queue the
 * same way). A statement issued through the database (not the handle) from inside the transaction
 * would wait forever: that is a bug, and it throws at once instead.
 */
export class SqliteSql implements SqlDatabase {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, StatementSync>();
  /** Resolves when the open transaction ends; null when none is open. */
  private gate: Promise<void> | null = null;
  /** The open transaction's token, which its function's async context carries. */
  private readonly inside = new AsyncLocalStorage<object>();
  private current: object | null = null;
  private savepoints = 0;

  readonly raw: DatabaseSync;
  readonly description: string;

  constructor(raw: DatabaseSync, description: string) {
    this.raw = raw;
    this.description = description;
  }

  /** A prepared statement, compiled once per text: hot paths (auth, /media) run these per request. */
  statement(text: string): StatementSync {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.raw.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    if (this.gate) return this.afterGate(() => this.get<T>(text, ...params));
    return settle(this.description, () => this.statement(text).get(...params) as T | undefined);
  }

  all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    if (this.gate) return this.afterGate(() => this.all<T>(text, ...params));
    return settle(this.description, () => this.statement(text).all(...params) as T[]);
  }

  run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    if (this.gate) return this.afterGate(() => this.run(text, ...params));
    return settle(this.description, () => ({ changes: Number(this.statement(text).run(...params).changes) }));
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    while (this.gate) await this.afterGate(() => Promise.resolve());
    let open!: () => void;
    this.gate = new Promise((r) => (open = r));
    try {
      // Another process holding the write lock past busy_timeout, or a failing disk: unavailable.
      available(this.description, () => this.raw.exec('BEGIN IMMEDIATE'));
      const handle = new SqliteTransaction(this);
      const token = {};
      this.current = token;
      try {
        const result = await this.inside.run(token, () => fn(handle));
        available(this.description, () => this.raw.exec('COMMIT'));
        return result;
      } catch (error) {
        if (this.raw.isTransaction) this.raw.exec('ROLLBACK');
        throw error;
      } finally {
        handle.ended = true;
      }
    } finally {
      this.current = null;
      this.gate = null;
      open();
    }
  }

  /** Runs a nested transaction of the open one as a savepoint. */
  async savepoint<T>(fn: () => Promise<T>): Promise<T> {
    const name = `sp${++this.savepoints}`;
    this.raw.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn();
      this.raw.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      this.raw.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    }
  }

  /**
   * Runs `fn` against the connection synchronously, once no transaction is open: a read of several
   * statements (the media listing) sees one state of the database, with no promise per statement.
   */
  exclusive<T>(fn: (db: SqliteSql) => T): Promise<T> {
    if (this.gate) return this.afterGate(() => this.exclusive(fn));
    return settle(this.description, () => fn(this));
  }

  close(): Promise<void> {
    this.statements.clear();
    if (this.raw.isOpen) this.raw.close();
    return Promise.resolve();
  }

  private afterGate<T>(then: () => Promise<T>): Promise<T> {
    if (this.current !== null && this.inside.getStore() === this.current)
      return Promise.reject(
        new Error('a statement went to the database while its own transaction was open: pass the transaction handle'),
      );
    const gate = this.gate!;
    return gate.then(then);
  }
}

/** The handle a SQLite transaction's function gets: statements run at once, inside it. */
export class SqliteTransaction implements Sql {
  readonly dialect = 'sqlite' as const;
  ended = false;

  private readonly db: SqliteSql;

  constructor(db: SqliteSql) {
    this.db = db;
  }

  get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    return settle(this.db.description, () => {
      this.check();
      return this.db.statement(text).get(...params) as T | undefined;
    });
  }

  all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    return settle(this.db.description, () => {
      this.check();
      return this.db.statement(text).all(...params) as T[];
    });
  }

  run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    return settle(this.db.description, () => {
      this.check();
      return { changes: Number(this.db.statement(text).run(...params).changes) };
    });
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    this.check();
    return this.db.savepoint(() => fn(this));
  }

  exclusive<T>(fn: (db: SqliteSql) => T): Promise<T> {
    return settle(this.db.description, () => {
      this.check();
      return fn(this.db);
    });
  }

  /** A handle kept past its transaction would write outside any transaction: refused. */
  private check(): void {
    if (this.ended) throw new Error('this transaction has ended');
  }
}

/** `fn` over the SQLite connection behind a handle (the database or one of its transactions), run synchronously. */
export function sqliteExclusive<T>(db: Sql, fn: (db: SqliteSql) => T): Promise<T> {
  if (db instanceof SqliteSql || db instanceof SqliteTransaction) return db.exclusive(fn);
  return Promise.reject(new Error(`not a SQLite handle (${db.dialect})`));
}

/**
 * A synchronous step as a promise that rejects with what it throws; the database failing (not the
 * statement) as DatabaseUnavailableError.
 */
function settle<T>(description: string, step: () => T): Promise<T> {
  try {
    return Promise.resolve(available(description, step));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Runs `step`, throwing DatabaseUnavailableError in place of SQLite's busy, I/O and full-disk errors. */
function available<T>(description: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw sqliteUnavailable(error) ? new DatabaseUnavailableError(description, error) : error;
  }
}
