import pg from 'pg';
import { numberedPlaceholders } from './dialect.ts';
import type { Sql, SqlDatabase, SqlRunResult, SqlValue } from './types.ts';

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

/** Placeholders translated once per text. */
const translated = new Map<string, string>();
function pgText(text: string): string {
  let out = translated.get(text);
  if (out === undefined) {
    out = numberedPlaceholders(text);
    if (translated.size > 4096) translated.clear();
    translated.set(text, out);
  }
  return out;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

async function query<T>(
  on: Queryable,
  text: string,
  params: SqlValue[],
): Promise<{ rows: T[]; rowCount: number | null }> {
  const result: pg.QueryResult = await on.query({ text: pgText(text), values: params });
  return { rows: result.rows as T[], rowCount: result.rowCount };
}

export interface PostgresOptions {
  /** Connections per node; default 10. */
  max?: number;
  connectTimeoutMs?: number;
}

export class PostgresSql implements SqlDatabase {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;
  readonly description: string;

  constructor(url: string, description: string, options: PostgresOptions = {}) {
    this.description = description;
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
    return (await query<T>(this.pool, text, params)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    return (await query<T>(this.pool, text, params)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    return { changes: (await query(this.pool, text, params)).rowCount ?? 0 };
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const handle = new PostgresTransaction(client);
      try {
        const result = await fn(handle);
        await client.query('COMMIT');
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
      // A connection that could not even roll back is dropped rather than reused.
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

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async get<T>(text: string, ...params: SqlValue[]): Promise<T | undefined> {
    this.check();
    return (await query<T>(this.client, text, params)).rows[0];
  }

  async all<T>(text: string, ...params: SqlValue[]): Promise<T[]> {
    this.check();
    return (await query<T>(this.client, text, params)).rows;
  }

  async run(text: string, ...params: SqlValue[]): Promise<SqlRunResult> {
    this.check();
    return { changes: (await query(this.client, text, params)).rowCount ?? 0 };
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
