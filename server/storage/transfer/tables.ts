/**
 * What `clipdesk-service export` and `import` move, table by table. Every table of the SQLite
 * schema is in exactly one of these lists; export refuses a database with a table in none of them
 * (a schema step added without saying here whether its rows move), so no table is left behind
 * silently.
 */

export interface MovedTable {
  readonly name: string;
  /** The order rows are read in (and so inserted in): insertion order, which keeps identities and tiebreaks. */
  readonly order: string;
}

/**
 * Moved, in this order: a table comes after those its rows refer to (api_keys and user_limits
 * name users).
 */
export const MOVED_TABLES: readonly MovedTable[] = [
  { name: 'users', order: 'rowid' },
  { name: 'api_keys', order: 'rowid' },
  { name: 'user_limits', order: 'rowid' },
  { name: 'settings', order: 'rowid' },
  { name: 'media', order: 'seq' },
  { name: 'uploads', order: 'rowid' },
  { name: 'idempotency', order: 'rowid' },
  { name: 'generations', order: 'rowid' },
  { name: 'provider_jobs', order: 'rowid' },
  // Read in insertion order, so PostgreSQL's `rowid` identity (the deliveries' tiebreak) numbers them alike.
  { name: 'webhook_deliveries', order: 'rowid' },
  // The rate windows: a day's counts survive the move as they survive a restart.
  { name: 'rate_counters', order: 'user_id' },
];

/**
 * Not moved: leases belong to the processes that hold them (concurrency slots, storage
 * reservations, the sweep's turn; they lapse within minutes of their node stopping). Still checked
 * empty on the target: rows there mean a service runs on it.
 */
export const EPHEMERAL_TABLES: readonly string[] = ['running_slots', 'storage_reservations', 'leases'];

/**
 * Not moved, because the target rebuilds them from the moved rows in the same transaction (its own
 * triggers): SQLite's listing index, terms and counters, PostgreSQL's listing counters, and each
 * database's bookkeeping.
 */
const DERIVED_TABLES = new Set([
  'media_terms',
  'media_positions',
  'media_counts',
  'media_public_counts',
  'media_version',
  'sqlite_sequence',
  'schema_migrations',
]);
/** FTS5 tables and their shadow tables (media_find_data, media_grams_idx, …). */
const DERIVED_PREFIXES = ['media_find', 'media_grams', 'sqlite_'];

/**
 * Columns that are not moved, per table: `media.ord` is the listing's order key, which SQLite's
 * trigger computes from created_at as each row is inserted (and which also indexes the row for
 * search); PostgreSQL leaves it NULL.
 */
export const DERIVED_COLUMNS: Readonly<Record<string, readonly string[]>> = { media: ['ord'] };

export function isDerivedTable(name: string): boolean {
  return DERIVED_TABLES.has(name) || DERIVED_PREFIXES.some((p) => name.startsWith(p));
}

/** A table of the source that no list above names: export cannot say what to do with its rows. */
export function unknownTables(names: readonly string[]): string[] {
  const known = new Set([...MOVED_TABLES.map((t) => t.name), ...EPHEMERAL_TABLES]);
  return names.filter((n) => !known.has(n) && !isDerivedTable(n));
}
