import { resolve } from 'node:path';
import { defaultDataDir } from './data-dir.ts';
import { UsageError } from './usage-error.ts';
import type { BlobLocation } from '../storage/blobs/index.ts';
import type { DatabaseLocation } from '../storage/db.ts';

/**
 * Where a command keeps its rows and its files: `--data DIR`, `--database URL`
 * (`CLIPDESK_DATABASE_URL`) and `--storage URL` (`CLIPDESK_STORAGE_URL`), read the same way by
 * every command (serve, migrate, keys, users, providers). A flag wins over its variable.
 *
 * - database: absent, `sqlite:` or the data directory's `service.db` (as a path or `sqlite:PATH`)
 *   → the SQLite database in the data directory; `postgres://…` / `postgresql://…` → PostgreSQL.
 * - storage: absent, `file:` or the data directory (as a path or `file:PATH`) → the data
 *   directory on disk; `s3://bucket[/prefix]` → S3-compatible object storage.
 * SQLite and disk live in the data directory, so a path naming anything else is refused rather
 * than quietly ignored.
 */
export type { DatabaseLocation } from '../storage/db.ts';
export type StorageLocation = BlobLocation;

export interface Locations {
  dataDir: string;
  database: DatabaseLocation;
  storage: StorageLocation;
}

export const DATABASE_ENV = 'CLIPDESK_DATABASE_URL';
export const STORAGE_ENV = 'CLIPDESK_STORAGE_URL';
export const LISTEN_DATABASE_ENV = 'CLIPDESK_LISTEN_DATABASE_URL';

/**
 * `serve --listen-database URL` (`CLIPDESK_LISTEN_DATABASE_URL`; a flag wins over its variable):
 * the address of a connection that keeps its session (PostgreSQL itself, or a pooler in session
 * mode) for what needs one: the LISTEN connections (provider webhooks' relay, the generation
 * queue's wake-ups) and the node's `application_name`, by which the others see it alive. Undefined:
 * those use the database's own URL. Only beside a PostgreSQL database; the same database, as seen
 * through another address.
 */
export function resolveListenDatabase(
  value: string | boolean | undefined,
  database: DatabaseLocation,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const flag = stringOption(value, 'listen-database');
  const url = flag ?? nonEmpty(env[LISTEN_DATABASE_ENV]);
  if (url === undefined) return undefined;
  const name = flag !== undefined ? '--listen-database' : LISTEN_DATABASE_ENV;
  if (database.kind !== 'postgres')
    throw new UsageError(
      `${name} is for a PostgreSQL database (--database postgres://…); the SQLite database has no LISTEN connection`,
    );
  if (!/^postgres(ql)?:\/\//i.test(url))
    throw new UsageError(`${name} must be a postgres://USER@HOST:PORT/DB URL, not ${schemeOf(url)}`);
  try {
    new URL(url);
  } catch {
    throw new UsageError(`${name}: not a valid PostgreSQL URL (postgres://USER@HOST:PORT/DB)`);
  }
  return url;
}

export function resolveLocations(
  values: { data?: string | boolean; database?: string | boolean; storage?: string | boolean },
  env: NodeJS.ProcessEnv = process.env,
): Locations {
  const dataDir = resolve(stringOption(values.data, 'data') ?? defaultDataDir());
  const database = parseDatabase(stringOption(values.database, 'database') ?? nonEmpty(env[DATABASE_ENV]), dataDir);
  const storage = parseStorage(stringOption(values.storage, 'storage') ?? nonEmpty(env[STORAGE_ENV]), dataDir);
  return { dataDir, database, storage };
}

export function parseDatabase(value: string | undefined, dataDir: string): DatabaseLocation {
  if (value === undefined) return { kind: 'sqlite', dataDir };
  if (/^postgres(ql)?:\/\//i.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new UsageError(`--database: not a valid PostgreSQL URL (postgres://USER@HOST:PORT/DB)`);
    }
    return { kind: 'postgres', url: value };
  }
  const sqlitePath = /^sqlite:/i.test(value) ? value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : value;
  if (sqlitePath !== '' && !isPath(sqlitePath))
    throw new UsageError(
      `--database must be sqlite:, a path to the data directory's service.db, or postgres://…; not ${schemeOf(value)}`,
    );
  if (sqlitePath !== '' && resolve(sqlitePath) !== resolve(dataDir, 'service.db'))
    throw new UsageError(
      `--database: the SQLite database is ${resolve(dataDir, 'service.db')} (in the data directory); choose another with --data DIR`,
    );
  return { kind: 'sqlite', dataDir };
}

export function parseStorage(value: string | undefined, dataDir: string): StorageLocation {
  if (value === undefined) return { kind: 'file', dataDir };
  if (/^s3:\/\//i.test(value)) {
    const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/i.exec(value);
    if (!match) throw new UsageError('--storage: an S3 location is s3://BUCKET or s3://BUCKET/PREFIX');
    return { kind: 's3', bucket: match[1] ?? '', prefix: (match[2] ?? '').replace(/\/+$/, '') };
  }
  const filePath = /^file:/i.test(value) ? value.slice('file:'.length).replace(/^\/\/(?=\/)/, '') : value;
  if (filePath !== '' && !isPath(filePath))
    throw new UsageError(`--storage must be file:, the data directory, or s3://BUCKET/PREFIX; not ${schemeOf(value)}`);
  if (filePath !== '' && resolve(filePath) !== resolve(dataDir))
    throw new UsageError(
      `--storage: files on disk live in the data directory ${resolve(dataDir)}; choose another with --data DIR`,
    );
  return { kind: 'file', dataDir };
}

/** A URL's scheme for an error message (never the rest: it may hold a password). */
function schemeOf(value: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value)?.[1];
  return scheme === undefined ? 'that' : `${scheme}:`;
}

/** A plain path, not some other URL scheme (a one-letter "scheme" is a Windows drive). */
function isPath(value: string): boolean {
  return !/^[a-z][a-z0-9+.-]+:/i.test(value);
}

function stringOption(value: string | boolean | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
