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
 * Placeholders translated once per text, and a name for the first NAMED_LIMIT texts: a named
 * statement is parsed and planned once per connection and then only bound and executed, which on
 * the hot path (key, rate counters, listing) is a third of each statement's time on this machine.
 * PostgreSQL decides per statement whether a generic plan is as good as one planned for the
 * values (plan_cache_mode auto, after five executions), so a listing whose best plan depends on
 * its values keeps being planned for them. The cap bounds what each connection holds: texts
 * built per request (a list of n placeholders) run unnamed past it.
 */
interface Prepared {
  text: string;
  name?: string;
}
const NAMED_LIMIT = 512;
const translated = new Map<string, Prepared>();
let named = 0;
/**
 * Names are this process's own: a statement pooler without per-client statement tracking
 * (PgBouncer before 1.21 in transaction mode, or later without `max_prepared_statements`) hands a
 * connection the backend another node prepared its statements on, and `pg` binds a name it
 * believes it prepared without parsing it again. With names shared between nodes (`clipdesk_1` is
 * whichever text each node ran first) that would execute the other node's statement with this
 * one's values; with a name per process the server answers 26000 (not there) or 42P05 (this
 * node's other connection prepared it there), and the statement runs again unnamed.
 */
const NAME_PREFIX = `clipdesk_${randomBytes(4).toString('hex')}_`;
/**
 * A database's statement naming: off once the server forgot a statement a connection had
 * prepared, or held one it had not (a pooler between: see below). Per database, as one node has one.
 */
interface Naming {
  on: boolean;
}

function prepared(text: string): Prepared {
  let out = translated.get(text);
  if (out === undefined) {
    if (translated.size > 4096) translated.clear();
    out = { text: numberedPlaceholders(text) };
    // A name is never given to another text (a connection keeps what it prepared under it).
    if (named < NAMED_LIMIT) out.name = `${NAME_PREFIX}${++named}`;
    translated.set(text, out);
  }
  return out;
}

/**
 * PostgreSQL refuses a prepared `SELECT *` whose table gained a column since (0A000: another node
 * migrated the schema while this one ran); a statement pooler that does not keep prepared
 * statements per client (PgBouncer before 1.21 in transaction mode) loses them between
 * transactions (26000), or hands over a backend where this node's other connection already
 * prepared the name (42P05). Either way the statement is run again unnamed: the first for that
 * text from now on, the others for every text.
 */
function unprepared(error: unknown, statement: Prepared, naming: Naming): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (statement.name === undefined || (code !== '0A000' && code !== '26000' && code !== '42P05')) return false;
  if (code !== '0A000') naming.on = false;
  delete statement.name;
  return true;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

async function query<T>(
  on: Queryable,
  description: string,
  naming: Naming,
  text: string,
  params: SqlValue[],
  inTransaction = false,
): Promise<{ rows: T[]; rowCount: number | null }> {
  const statement = prepared(text);
  const run = () =>
    available(description, () =>
      on.query(
        naming.on && statement.name !== undefined
          ? { name: statement.name, text: statement.text, values: params }
          : { text: statement.text, values: params },
      ),
    );
  let result: pg.QueryResult;
  try {
    result = await run();
  } catch (error) {
    // Inside a transaction the failed statement has aborted it: only the caller can start over.
    if (unprepared(error, statement, naming) && !inTransaction) result = await run();
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
  private readonly begin: string;
  private readonly naming: Naming = { on: true };

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

  async get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    return (await query<T>(this.pool, this.description, this.naming, text, params)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    return (await query<T>(this.pool, this.description, this.naming, text, params)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    return { changes: (await query(this.pool, this.description, this.naming, text, params)).rowCount ?? 0 };
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
      const handle = new PostgresTransaction(client, this.description, this.naming);
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
  private readonly description: string;
  private readonly naming: Naming;

  constructor(client: pg.PoolClient, description: string, naming: Naming) {
    this.client = client;
    this.description = description;
    this.naming = naming;
  }

  async get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    this.check();
    return (await query<T>(this.client, this.description, this.naming, text, params, true)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    this.check();
    return (await query<T>(this.client, this.description, this.naming, text, params, true)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    this.check();
    return { changes: (await query(this.client, this.description, this.naming, text, params, true)).rowCount ?? 0 };
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
