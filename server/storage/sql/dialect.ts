import type { Dialect, Sql } from './types.ts';

/**
 * Everything the service's SQL spells differently on SQLite and PostgreSQL. Statements elsewhere
 * are portable (`ON CONFLICT … DO UPDATE`, `RETURNING`, `"window"` quoted, flags as 0/1 integers,
 * JSON as TEXT); where they cannot be, they ask here.
 */

/**
 * `?` placeholders as PostgreSQL's `$1, $2, …`. A `?` inside a quoted string, a quoted name or a
 * comment stays as it is. SQLite takes `?` itself.
 */
export function numberedPlaceholders(text: string): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      const stop = end === -1 ? text.length : end + 1;
      out += text.slice(i, stop);
      i = stop - 1;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += text.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** `column IN (the strings of a JSON array bound to one placeholder)`: one statement for any list length. */
export function inJsonArray(dialect: Dialect, column: string): string {
  return dialect === 'sqlite'
    ? `${column} IN (SELECT value FROM json_each(?))`
    : `${column} IN (SELECT jsonb_array_elements_text(CAST(? AS jsonb)))`;
}

/**
 * The insertion order of a table without an integer key of its own: SQLite's rowid; on PostgreSQL
 * the `rowid` identity column that schema-v2.sql adds for the same purpose.
 */
export const INSERTION_ORDER = 'rowid';

/**
 * Inside a transaction: waits until no other transaction holds `key`, and holds it to the end.
 * SQLite's transactions already take the database's write lock up front (BEGIN IMMEDIATE), so
 * they are one at a time; PostgreSQL takes a transaction-scoped advisory lock on the key's hash
 * (`key` is text, so without U+0000).
 */
export async function lockKey(tx: Sql, key: string): Promise<void> {
  if (tx.dialect === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(hashtextextended(?, 0)) AS locked', key);
}

/**
 * The database server's current run: something recorded with it can be told void once the server
 * has restarted (every connection and statement of the earlier run was cut off). PostgreSQL's start
 * time; SQLite, a file this process opens, has no run of its own: ''.
 */
export async function serverRun(db: Sql): Promise<string> {
  if (db.dialect !== 'postgres') return '';
  const row = await db.get<{ run: string }>(`SELECT ${serverRunSql(db.dialect)} AS run`);
  return row?.run ?? '';
}

/** serverRun as an SQL expression, for a statement that must compare with it atomically. */
export function serverRunSql(dialect: Dialect): string {
  return dialect === 'postgres' ? 'pg_postmaster_start_time()::text' : "''";
}
