import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import type { BlobStore } from '../blobs/index.ts';
import { mimeForName } from '../file-types.ts';
import { SIGNING_SECRET_SETTING, readSecretFile } from '../secret.ts';
import { lockKey } from '../sql/dialect.ts';
import type { Sql, SqlDatabase, SqlValue } from '../sql/types.ts';
import {
  BundleError,
  FILE_ENTRY,
  FILE_INDEX,
  HashCheck,
  MANIFEST,
  MANIFEST_FILE,
  SECRET_FILE,
  filePath,
  hashLines,
  readLines,
  rowsPath,
} from './bundle.ts';
import type { FileEntry, Manifest } from './bundle.ts';
import { EPHEMERAL_TABLES, MOVED_TABLES } from './tables.ts';

/**
 * `clipdesk-service import`: a bundle of `export` (bundle.ts) into a target database (migrated
 * first by the caller, the `migrate` path) and file store, nothing lost, everything verified.
 *
 * 1. The bundle is checked before the target is touched: the manifest, the secret's hash, each
 *    rows file's hash and row count, the file index's hash, count and byte total, and each listed
 *    file's presence and size.
 * 2. The target must hold no rows (TargetNotEmptyError): the move never merges into a live service.
 * 3. Files first: each streams from the bundle into the store through a check of its size and
 *    sha256 that fails the put at its end when they differ, so a damaged file is never stored.
 * 4. Rows last, in one transaction, each rows file hashed again as it is read, each table's count
 *    compared with the manifest before the commit. The target's triggers rebuild the listing's
 *    index and counters as the rows go in; the signing secret goes where the target keeps it.
 * A failure in 3 or 4 commits no row and removes the files this run put; a run killed midway
 * leaves at most files no row names (a new run puts them again; `fsck --repair` removes them).
 */
export class TargetNotEmptyError extends Error {
  override name = 'TargetNotEmptyError';
}

export interface ImportOptions {
  bundle: string;
  db: SqlDatabase;
  store: BlobStore;
  /** The target's data directory: where a SQLite target keeps its secret.key. */
  dataDir: string;
  log(line: string): void;
}

export interface ImportResult {
  manifest: Manifest;
  rows: Record<string, number>;
  files: { count: number; bytes: number };
}

/** Files stored at once: each streams (an S3 put holds at most its parts in flight, ~20 MiB). */
const FILES_IN_FLIGHT = 4;

/** Placeholders per INSERT statement: well under SQLite's 32,766 and PostgreSQL's 65,535. */
const PARAMS_PER_STATEMENT = 8_000;

export async function readManifest(bundle: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(join(bundle, MANIFEST_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new BundleError(
        `${bundle} has no ${MANIFEST_FILE}: not an export bundle, or an export that did not finish`,
      );
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BundleError(`${join(bundle, MANIFEST_FILE)} is not valid JSON (truncated or damaged)`);
  }
  const manifest = MANIFEST.safeParse(parsed);
  if (!manifest.success)
    throw new BundleError(
      `${join(bundle, MANIFEST_FILE)} is not a manifest of this format (${manifest.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || 'manifest'}: ${i.message}`)
        .join('; ')})`,
    );
  const names = manifest.data.tables.map((t) => t.name);
  const missing = MOVED_TABLES.filter((t) => !names.includes(t.name)).map((t) => t.name);
  const unknown = names.filter((n) => !MOVED_TABLES.some((t) => t.name === n));
  if (missing.length > 0 || unknown.length > 0)
    throw new BundleError(
      `the bundle's tables differ from this build's: ${[
        ...missing.map((n) => `${n} missing`),
        ...unknown.map((n) => `${n} unknown`),
      ].join(', ')}`,
    );
  return manifest.data;
}

/** The signing secret of the bundle, checked against the manifest; null when the source had none. */
async function readBundleSecret(bundle: string, manifest: Manifest): Promise<string | null> {
  if (manifest.secret === null) return null;
  let hex: string;
  try {
    hex = (await readFile(join(bundle, SECRET_FILE), 'utf8')).trim();
  } catch {
    throw new BundleError(`the bundle's ${SECRET_FILE} is missing or unreadable`);
  }
  if (
    !/^[0-9a-f]{64}$/.test(hex) ||
    createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex') !== manifest.secret.sha256
  )
    throw new BundleError(`the bundle's ${SECRET_FILE} does not match its sha256 in the manifest`);
  return hex;
}

/** Step 1: every hash and count of the bundle but the files' contents (checked as they stream in). */
export async function checkBundle(bundle: string): Promise<{ manifest: Manifest; secret: string | null }> {
  const manifest = await readManifest(bundle);
  const secret = await readBundleSecret(bundle, manifest);
  for (const table of manifest.tables) {
    const what = `rows/${table.name}.ndjson`;
    const found = await hashLines(rowsPath(bundle, table.name), what);
    if (found.sha256 !== table.sha256) throw new BundleError(`${what} does not match its sha256 in the manifest`);
    if (found.lines !== table.rows)
      throw new BundleError(`${what} has ${found.lines} rows; the manifest lists ${table.rows}`);
  }
  const index = await hashLines(join(bundle, FILE_INDEX), FILE_INDEX);
  if (index.sha256 !== manifest.files.sha256)
    throw new BundleError(`${FILE_INDEX} does not match its sha256 in the manifest`);
  let count = 0;
  let bytes = 0;
  for await (const entry of fileEntries(bundle)) {
    count++;
    bytes += entry.size;
    const found = await stat(filePath(bundle, entry.key)).catch(() => null);
    if (found === null || !found.isFile()) throw new BundleError(`files/${entry.key} is missing from the bundle`);
    if (found.size !== entry.size)
      throw new BundleError(`files/${entry.key} has ${found.size} bytes; the bundle lists ${entry.size}`);
  }
  if (count !== manifest.files.count || bytes !== manifest.files.bytes)
    throw new BundleError(
      `${FILE_INDEX} lists ${count} files of ${bytes} bytes; the manifest says ${manifest.files.count} of ${manifest.files.bytes}`,
    );
  return { manifest, secret };
}

async function* fileEntries(bundle: string): AsyncGenerator<FileEntry> {
  for await (const line of readLines(join(bundle, FILE_INDEX), createHash('sha256'))) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new BundleError(`${FILE_INDEX} has a line that is not JSON`);
    }
    const entry = FILE_ENTRY.safeParse(parsed);
    if (!entry.success) throw new BundleError(`${FILE_INDEX} has an entry that is not a stored file`);
    yield entry.data;
  }
}

/** Step 2: the tables the target must have, each empty; the first holding rows names the refusal. */
async function requireEmpty(db: Sql, what: string): Promise<void> {
  for (const table of [...MOVED_TABLES.map((t) => t.name), ...EPHEMERAL_TABLES]) {
    if ((await db.get(`SELECT 1 AS x FROM ${table} LIMIT 1`)) !== undefined)
      throw new TargetNotEmptyError(
        `${what} already holds data (its ${table} table has rows${table === 'settings' ? ': a node has started on it and stored a URL signing secret of its own' : ''}): ` +
          'import moves a service into an empty database and never merges. Give it a new database, or drop this ' +
          'one first; start the nodes after the import.',
      );
  }
}

async function targetColumns(db: Sql, table: string): Promise<Set<string>> {
  const rows =
    db.dialect === 'sqlite'
      ? await db.all<{ name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
      : await db.all<{ name: string }>(
          'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
          table,
        );
  return new Set(rows.map((r) => r.name));
}

export async function importService(options: ImportOptions): Promise<ImportResult> {
  const { bundle, db, store } = options;
  const log = (line: string) => options.log(line);
  const { manifest, secret } = await checkBundle(bundle);
  log(
    `the bundle checks out: ${manifest.tables.reduce((n, t) => n + t.rows, 0)} rows in ${manifest.tables.length} tables, ` +
      `${manifest.files.count} files (${manifest.files.bytes} bytes)`,
  );
  await requireEmpty(db, db.description);
  for (const table of manifest.tables) {
    const have = await targetColumns(db, table.name);
    const lacking = table.columns.filter((c) => !have.has(c));
    if (lacking.length > 0)
      throw new BundleError(`${db.description} has no column(s) ${lacking.join(', ')} in ${table.name}`);
  }
  // A SQLite target keeps the secret in its data directory: one of its own would split the service.
  let wroteSecretFile = false;
  if (db.dialect === 'sqlite' && secret !== null) {
    const own = await readSecretFile(options.dataDir);
    if (own !== null && own.toString('hex') !== secret)
      throw new TargetNotEmptyError(
        `${join(options.dataDir, 'secret.key')} holds another URL signing secret: the target has been used. ` +
          'Import into a new data directory.',
      );
  }

  let started = 0;
  try {
    started = await putFiles(store, bundle, (n) => (started = n));
    log(`stored ${started} files in ${store.location}, each matching its sha256`);
    if (db.dialect === 'sqlite' && secret !== null && (await readSecretFile(options.dataDir)) === null) {
      await atomicWriteFile(join(options.dataDir, 'secret.key'), `${secret}\n`, 0o600);
      wroteSecretFile = true;
    }
    const rows = await db.transaction(async (tx) => {
      // Two imports at once into one PostgreSQL database: the second waits, then finds rows.
      await lockKey(tx, 'clipdesk-service import');
      await requireEmpty(tx, db.description);
      const counts: Record<string, number> = {};
      for (const table of MOVED_TABLES) {
        const listed = manifest.tables.find((t) => t.name === table.name)!;
        counts[table.name] = await insertTable(tx, bundle, listed);
      }
      if (tx.dialect === 'postgres') {
        // Identities continue after the moved ones.
        await tx.get(
          "SELECT setval(pg_get_serial_sequence('media', 'seq'), coalesce(max(seq), 1), max(seq) IS NOT NULL) FROM media",
        );
        if (secret !== null)
          await tx.run('INSERT INTO settings (name, value) VALUES (?, ?)', SIGNING_SECRET_SETTING, secret);
      }
      return counts;
    });
    log(
      `committed ${Object.values(rows).reduce((a, b) => a + b, 0)} rows to ${db.description}, each table's count as listed`,
    );
    return { manifest, rows, files: { count: started, bytes: manifest.files.bytes } };
  } catch (error) {
    // Nothing was committed: the files this run put would be orphans.
    await removePut(store, bundle, started).catch(() => undefined);
    if (wroteSecretFile) await rm(join(options.dataDir, 'secret.key'), { force: true });
    throw error;
  }
}

/**
 * Puts every listed file, a few at once (a bucket's latency, not its bandwidth, bounds one put at a
 * time of small files such as thumbnails), in index order. `onStarted` follows how many were begun,
 * so that a failure can remove them all: when one fails, no more begin, and those in flight finish
 * before the first failure is thrown.
 */
async function putFiles(store: BlobStore, bundle: string, onStarted: (n: number) => void): Promise<number> {
  let started = 0;
  let failure: { error: unknown } | null = null;
  const running = new Set<Promise<void>>();
  for await (const entry of fileEntries(bundle)) {
    if (failure) break;
    onStarted(++started);
    const put: Promise<void> = putFile(store, bundle, entry)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(put));
    running.add(put);
    if (running.size >= FILES_IN_FLIGHT) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw (failure as { error: unknown }).error;
  return started;
}

async function putFile(store: BlobStore, bundle: string, entry: FileEntry): Promise<void> {
  const check = new HashCheck({ size: entry.size, sha256: entry.sha256, what: `files/${entry.key}` });
  const [feeding, storing] = await Promise.allSettled([
    pipeline(createReadStream(filePath(bundle, entry.key)), check),
    store.putStream(entry.key, check, {
      contentType: entry.contentType ?? mimeForName(entry.key) ?? 'application/octet-stream',
      maxBytes: entry.size,
    }),
  ]);
  // The bundle's fault first: a store reports a failed source as its own error.
  for (const settled of [feeding, storing])
    if (settled.status === 'rejected' && settled.reason instanceof BundleError) throw settled.reason;
  if (storing.status === 'rejected') throw storing.reason;
  if (feeding.status === 'rejected') throw feeding.reason;
}

/** Removes the first `count` files of the index: those this run began to put before it failed (a missing one is no error). */
async function removePut(store: BlobStore, bundle: string, count: number): Promise<void> {
  let left = count;
  if (left === 0) return;
  for await (const entry of fileEntries(bundle)) {
    await store.delete(entry.key);
    if (--left === 0) return;
  }
}

async function insertTable(tx: Sql, bundle: string, table: Manifest['tables'][number]): Promise<number> {
  const { name, columns } = table;
  const perStatement = Math.max(1, Math.floor(PARAMS_PER_STATEMENT / columns.length));
  const head = `INSERT INTO ${name} (${columns.map((c) => `"${c}"`).join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const what = `rows/${name}.ndjson`;
  const hash = createHash('sha256');
  let batch: SqlValue[] = [];
  let inBatch = 0;
  let read = 0;
  const flush = async () => {
    if (inBatch === 0) return;
    await tx.run(head + Array.from({ length: inBatch }, () => tuple).join(', '), ...batch);
    batch = [];
    inBatch = 0;
  };
  for await (const line of readLines(rowsPath(bundle, name), hash)) {
    let values: unknown;
    try {
      values = JSON.parse(line);
    } catch {
      throw new BundleError(`${what} has a line that is not JSON`);
    }
    if (
      !Array.isArray(values) ||
      values.length !== columns.length ||
      !values.every((v) => v === null || typeof v === 'string' || typeof v === 'number')
    )
      throw new BundleError(`${what} has a row that does not match its ${columns.length} columns`);
    batch.push(...(values as SqlValue[]));
    read++;
    if (++inBatch === perStatement) await flush();
  }
  await flush();
  if (hash.digest('hex') !== table.sha256) throw new BundleError(`${what} changed while it was imported`);
  const stored = (await tx.get<{ n: number }>(`SELECT count(*) AS n FROM ${name}`))?.n ?? -1;
  if (read !== table.rows || Number(stored) !== table.rows)
    throw new BundleError(`${name}: ${Number(stored)} rows stored, ${read} read; the manifest lists ${table.rows}`);
  return table.rows;
}
