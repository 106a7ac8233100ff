/**
 * The database itself failing, as opposed to a statement failing: the server is down, the
 * connection was cut, the pool could not get a connection in time, the disk is full or failing, or
 * another process kept the SQLite write lock past the busy timeout. The request that met it was
 * not completed, and the same request may well succeed once the database is back, so the HTTP
 * layer answers 503 with Retry-After (server/http/router.ts), not 500. A statement's own errors
 * (a constraint, a syntax error, a bad value) are bugs or answers and pass as they are.
 *
 * Both implementations (postgres.ts, sqlite.ts) throw this in place of the driver's error; the
 * driver's error is its `cause`, for the log.
 */
export class DatabaseUnavailableError extends Error {
  constructor(description: string, cause: unknown) {
    super(`${description} is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * SQLSTATE classes and codes of a connection that failed or a server that cannot serve:
 * 08 connection exception; 53 insufficient resources (disk full, out of memory, too many
 * connections); 58 system error (I/O); 57P01–57P03 admin shutdown, crash shutdown, cannot connect
 * now (starting up or in recovery).
 */
const PG_CLASSES = new Set(['08', '53', '58']);
const PG_CODES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of reaching the server. */
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/**
 * What `pg` throws without a code when a connection is lost or cannot be had: the server closed
 * it, the connect timeout (connectionTimeoutMillis) passed, a client already broken was used.
 */
const PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Connection ended unexpectedly/,
];

/** True when a `pg` error means the database (or the way to it) failed, not the statement. */
export function postgresUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (PG_CODES.has(code) || NET_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && PG_CLASSES.has(code.slice(0, 2))) return true;
  }
  // Node reports a refused connection to every address of a host as one AggregateError.
  if (error instanceof AggregateError && error.errors.some((e) => postgresUnavailable(e))) return true;
  return PG_MESSAGES.some((m) => m.test(error.message));
}

/**
 * SQLite's primary result codes of a database that cannot be written or read now: SQLITE_BUSY
 * (5: another connection held the lock past busy_timeout), SQLITE_IOERR (10), SQLITE_FULL (13,
 * the disk), SQLITE_CANTOPEN (14). node:sqlite gives the extended code in `errcode`.
 */
const SQLITE_CODES = new Set([5, 10, 13, 14]);

export function sqliteUnavailable(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && SQLITE_CODES.has(errcode & 0xff);
}
