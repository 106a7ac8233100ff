import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { numberedPlaceholders } from './dialect.ts';
import type { Sql, SqlDatabase, SqlRunResult, SqlValue } from './types.ts';
import { DatabaseUnavailableError, postgresUnavailable } from './unavailable.ts';

/**
 * The Sql interface over a `pg` Pool (several nodes on one PostgreSQL database).
 *
 * The schema keeps times, sizes and counters as BIGINT and sums come back as NUMERIC; both are
 * read as JavaScript numbers, as SQLite gives them (milliseconds and byte counts stay far below
 * 2^53). The parsers belong to this pool only, not to the process's `pg` module.
 */
const AS_NUMBER = new Set<number>([pg.types.builtins.INT8, pg.types.builtins.NUMERIC]);
const toNumber = (value: string): number => Number(value);
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    AS_NUMBER.has(oid)
      ? toNumber
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Placeholders translated once per text, and a number for the first NAMED_LIMIT texts, under which
 * each pool names it: a named statement is parsed and planned once per connection and then only
 * bound and executed, which on the hot path (key, rate counters, listing) is a third of each
 * statement's time on this machine. PostgreSQL decides per statement whether a generic plan is as
 * good as one planned for the values (plan_cache_mode auto, after five executions), so a listing
 * whose best plan depends on its values keeps being planned for them. The cap bounds what each
 * connection holds: texts built per request (a list of n placeholders) run unnamed past it.
 */
interface Prepared {
  text: string;
  /** Absent: always unnamed (past the cap, or a statement PostgreSQL refused once: 0A000 below). */
  number?: number;
}
const NAMED_LIMIT = 512;
const translated = new Map<string, Prepared>();
let numbered = 0;

function prepared(text: string): Prepared {
  let out = translated.get(text);
  if (out === undefined) {
    if (translated.size > 4096) translated.clear();
    out = { text: numberedPlaceholders(text) };
    // A number is never given to another text (a connection keeps what it prepared under it).
    if (numbered < NAMED_LIMIT) out.number = ++numbered;
    translated.set(text, out);
  }
  return out;
}

/**
 * A pool's statement names: a prefix of its own (random), so that a server connection another
 * pool (another node, another process) prepared statements on never runs one of theirs for ours.
 * A transaction-mode pooler without prepared-statement support (PgBouncer before 1.21, or without
 * `max_prepared_statements`) hands a client whichever server connection is free, so a name one
 * pool gave different texts would run the wrong statement there. `on` goes off for good once the
 * pool has seen such a pooler.
 */
interface Naming {
  prefix: string;
  on: boolean;
}

/** SQLSTATEs of a named statement and a server connection that do not match. */
const FORGOTTEN = '26000'; // invalid_sql_statement_name: this server connection never prepared it
const ALREADY = '42P05'; // duplicate_prepared_statement: another client prepared it on this one
const STALE = '0A000'; // feature_not_supported: a cached SELECT *'s table gained a column

/** Rounds of checkStatementPooler at most (it stops at the first that finds the pooler). */
const PROBE_ROUNDS = 5;

/**
 * PostgreSQL refuses a prepared `SELECT *` whose table gained a column since (0A000: another node
 * migrated the schema while this one ran): that text runs unnamed from then on. A statement pooler
 * that does not keep prepared statements per client loses them between transactions (26000), or
 * hands a client a server connection another client prepared the name on (42P05): the pool names
 * no statement from then on. Either way the statement is run again unnamed.
 */
function unprepared(error: unknown, statement: Prepared, naming: Naming, named: boolean): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (!named) return false;
  if (code === FORGOTTEN || code === ALREADY) naming.on = false;
  else if (code === STALE) delete statement.number;
  else return false;
  return true;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

async function query<T>(
  on: Queryable,
  naming: Naming,
  description: string,
  text: string,
  params: SqlValue[],
  inTransaction = false,
): Promise<{ rows: T[]; rowCount: number | null }> {
  const statement = prepared(text);
  // Decided when sent: statements in flight when the pool stops naming fail over too.
  const named = naming.on && statement.number !== undefined;
  const run = (name: boolean) =>
    available(description, () =>
      on.query(
        name
          ? { name: naming.prefix + String(statement.number), text: statement.text, values: params }
          : { text: statement.text, values: params },
      ),
    );
  let result: pg.QueryResult;
  try {
    result = await run(named);
  } catch (error) {
    // Inside a transaction the failed statement has aborted it: only the caller can start over.
    if (unprepared(error, statement, naming, named) && !inTransaction) result = await run(false);
    else throw error;
  }
  return { rows: result.rows as T[], rowCount: result.rowCount };
}

/**
 * Runs `step`, throwing DatabaseUnavailableError in place of a failure of the connection or the
 * server (unavailable.ts). The pool drops a broken connection and opens a new one on next use, so
 * the node serves again once the database is back, without a restart.
 */
async function available<T>(description: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw postgresUnavailable(error) ? new DatabaseUnavailableError(description, error) : error;
  }
}

export interface PostgresOptions {
  /** Connections per node; default 10. */
  max?: number;
  connectTimeoutMs?: number;
  /** A transaction left idle this long is ended by the server; default IDLE_IN_TRANSACTION_MS. */
  idleInTransactionMs?: number;
}

/**
 * How long a transaction may sit between two statements before PostgreSQL ends its session. Every
 * transaction here runs statements back to back (nothing waits on the network or the bucket inside
 * one), so only a stalled node reaches it: one paused (SIGSTOP) or frozen mid-transaction would
 * otherwise hold its row and advisory locks (an account's storage reservations, a generation's
 * commit) and block every other node that needs them until it resumed, possibly never. Set per
 * transaction (SET LOCAL, in BEGIN's round trip) rather than per connection: a transaction-mode
 * pooler keeps neither startup parameters nor session settings, and a transaction is what it keeps.
 */
export const IDLE_IN_TRANSACTION_MS = 20_000;

export class PostgresSql implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;
  readonly description: string;
  private readonly naming: Naming = { prefix: `clipdesk_${randomBytes(4).toString('hex')}_`, on: true };

  private readonly begin: string;

  constructor(url: string, description: string, options: PostgresOptions = {}) {
    this.description = description;
    const idleMs = Math.max(1, Math.round(options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS));
    this.begin = `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${idleMs}`;
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      types,
    });
    // An idle connection lost (the server restarted) is replaced on next use; without a listener
    // its 'error' would end the process.
    this.pool.on('error', () => undefined);
  }

  /** False once a statement pooler was seen between this pool and PostgreSQL: statements run unnamed. */
  get namesStatements(): boolean {
    return this.naming.on;
  }

  /**
   * Finds, before any work, a transaction-mode pooler that loses prepared statements (PgBouncer
   * before 1.21, or without `max_prepared_statements`): once work runs, a statement inside a
   * transaction that meets it fails that transaction (the pool stops naming statements then, but
   * only the caller could start the transaction over). Two of the pool's connections: A prepares a
   * statement in a transaction; B opens a transaction, which such a pooler gives the server
   * connection A just freed (its default hands out the last freed one); A's statement then runs on
   * another server connection, which never prepared it (26000). Directly on PostgreSQL, through a
   * session-mode pooler, or one that keeps prepared statements per client, it answers. A pooler
   * that hands out server connections in another order, or a round whose freed server connection
   * another client took first, passes unnoticed: the statements' own fallback (above) covers it,
   * but for transactions that meet it first.
   */
  async checkStatementPooler(): Promise<void> {
    if (!this.naming.on || (this.pool.options.max ?? 10) < 2) return;
    const a = await available(this.description, () => this.pool.connect());
    let b: pg.PoolClient | undefined;
    // A probe that failed midway may leave a connection inside a transaction: dropped, not reused.
    let failed = true;
    // Checked-out clients have no listener of the pool's (see transaction()).
    const onLost = (): void => undefined;
    a.on('error', onLost);
    try {
      b = await available(this.description, () => this.pool.connect());
      b.on('error', onLost);
      // Other clients of the pooler (the other nodes) may take the freed server connection first:
      // a few rounds, each with a statement of its own, and one failure is enough.
      for (let round = 1; round <= PROBE_ROUNDS && this.naming.on; round++)
        await this.probeOnce(a, b, `${this.naming.prefix}probe${round}`);
      failed = false;
    } finally {
      a.off('error', onLost);
      b?.off('error', onLost);
      b?.release(failed);
      a.release(failed);
    }
  }

  private async probeOnce(a: pg.PoolClient, b: pg.PoolClient, name: string): Promise<void> {
    const probe = { name, text: 'SELECT 1 AS probe' };
    let timer: NodeJS.Timeout | undefined;
    try {
      await a.query('BEGIN');
      await a.query(probe);
      await a.query('COMMIT');
      await b.query('BEGIN');
      await b.query('SELECT 1');
      const again = a.query(probe).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
      // A pooler with one server connection runs A's statement only once B's transaction ends.
      await Promise.race([again, new Promise((r) => (timer = setTimeout(r, 1_000)))]);
      await b.query('COMMIT');
      const error = await again;
      const code = (error as { code?: unknown } | undefined)?.code;
      if (code === FORGOTTEN || code === ALREADY) this.naming.on = false;
      else if (error !== undefined) throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    return (await query<T>(this.pool, this.naming, this.description, text, params)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    return (await query<T>(this.pool, this.naming, this.description, text, params)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    return { changes: (await query(this.pool, this.naming, this.description, text, params)).rowCount ?? 0 };
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await available(this.description, () => this.pool.connect());
    let broken = false;
    // A checked-out client has no listener of the pool's: a connection lost while this transaction
    // holds it (the server stopped between two statements) would be an unhandled 'error' that ends
    // the process. Its statements fail on their own; the connection is dropped at release.
    const onLost = (): void => {
      broken = true;
    };
    client.on('error', onLost);
    try {
      await available(this.description, () => client.query(this.begin));
      const handle = new PostgresTransaction(client, this.naming, this.description);
      try {
        const result = await fn(handle);
        await available(this.description, () => client.query('COMMIT'));
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        handle.ended = true;
      }
    } finally {
      // A connection that was lost, or could not even roll back, is dropped rather than reused.
      client.off('error', onLost);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

class PostgresTransaction implements Sql {
  readonly dialect = 'postgres' as const;
  ended = false;
  private savepoints = 0;

  private readonly client: pg.PoolClient;
  private readonly naming: Naming;
  private readonly description: string;

  constructor(client: pg.PoolClient, naming: Naming, description: string) {
    this.client = client;
    this.naming = naming;
    this.description = description;
  }

  async get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    this.check();
    return (await query<T>(this.client, this.naming, this.description, text, params, true)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    this.check();
    return (await query<T>(this.client, this.naming, this.description, text, params, true)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    this.check();
    return { changes: (await query(this.client, this.naming, this.description, text, params, true)).rowCount ?? 0 };
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    this.check();
    const name = `sp${++this.savepoints}`;
    await this.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn(this);
      await this.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
  }

  private check(): void {
    if (this.ended) throw new Error('this transaction has ended');
  }
}
