/**
 * The service's rows, reached through one small asynchronous interface so that the same modules run
 * on the embedded SQLite file (the default: one node, no server) and on PostgreSQL (several nodes).
 *
 * - SQL is written once, with `?` placeholders; each implementation translates them.
 * - Whatever the two dialects spell differently is in dialect.ts, and nowhere else.
 * - A transaction hands its function a handle of the same shape: helpers take `Sql` and work the
 *   same whether they are given the database or a transaction, so work that spans helpers stays
 *   atomic by passing the handle on. A transaction started on a transaction's handle is a savepoint.
 */
export type Dialect = 'sqlite' | 'postgres';

/** What a placeholder may stand for. */
export type SqlValue = string | number | null;

export interface SqlRunResult {
  /** Rows inserted, updated or deleted. */
  changes: number;
}

export interface Sql {
  readonly dialect: Dialect;
  /** The first row, or undefined. */
  get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined>;
  all<T>(text: string, ...params: SqlValue[]): Promise<T[]>;
  run(text: string, ...params: SqlValue[]): Promise<SqlRunResult>;
  /** Runs `fn` in one transaction: all of its writes land, or none do. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
}

/** The database itself: a handle that can be closed, and says what it is in messages. */
export interface SqlDatabase extends Sql {
  /** How errors and logs name it (never a password). */
  readonly description: string;
  close(): Promise<void>;
}
