import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import { BlobNotFoundError } from '../blobs/index.ts';
import type { BlobStore } from '../blobs/index.ts';
import { isMediaId, isStoredFileName, mediaKey, receivedUploadKey } from '../layout.ts';
import { readSecretFile } from '../secret.ts';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  FILE_INDEX,
  HashTap,
  MANIFEST_FILE,
  SECRET_FILE,
  filePath,
  rowsPath,
} from './bundle.ts';
import type { FileEntry, Manifest } from './bundle.ts';
import { DERIVED_COLUMNS, MOVED_TABLES, unknownTables } from './tables.ts';

/**
 * `clipdesk-service export`: a one-machine service (its SQLite database, its stored files and its
 * URL signing secret) written to a bundle directory (bundle.ts) that `import` moves anywhere.
 *
 * It reads one snapshot: every row comes from one read transaction on its own connection, which
 * in WAL mode sees the database as it was when the transaction began, whatever a running service
 * writes meanwhile, and takes no lock that would stop it. The service writes an item's files before
 * its row and deletes them after its row, so every file a snapshot's row names existed when the
 * snapshot began; only a deletion since (retention, an upload completed into its item) can take
 * one away, and then the export fails saying so, leaving no bundle. Stopping the service first
 * makes that impossible; files written after the snapshot are not the snapshot's and stay behind.
 */
export class ExportError extends Error {
  override name = 'ExportError';
}

export interface ExportOptions {
  /** The source's SQLite connection, at this build's schema; only read. */
  raw: DatabaseSync;
  schemaVersion: number;
  databaseDescription: string;
  store: BlobStore;
  dataDir: string;
  /** The bundle directory: absent or empty. */
  out: string;
  providersWithKeys: string[];
  now: Date;
}

export interface ExportResult {
  manifest: Manifest;
}

/** Rows per chunk written: one write per chunk, not per row. */
const ROWS_PER_CHUNK = 256;

export async function exportService(options: ExportOptions): Promise<ExportResult> {
  const { raw, out } = options;
  const created = await prepareOut(out);
  raw.exec('BEGIN');
  try {
    // The snapshot starts at the transaction's first read.
    const tables = raw
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => String((r as { name: string }).name));
    const unknown = unknownTables(tables);
    if (unknown.length > 0)
      throw new ExportError(
        `the database has table(s) this build does not know how to move: ${unknown.join(', ')} (server/storage/transfer/tables.ts)`,
      );
    // Files first, rows after, all from the one snapshot: the rows file of media lists exactly the
    // items whose files were copied, whatever the service commits meanwhile.
    const files = await exportFiles(raw, options.store, out);
    await mkdir(join(out, 'rows'), { mode: 0o700 });
    const manifestTables: Manifest['tables'] = [];
    for (const table of MOVED_TABLES) manifestTables.push(await exportTable(raw, table.name, table.order, out));
    const secret = await readSecretFile(options.dataDir);
    if (secret) await atomicWriteFile(join(out, SECRET_FILE), `${secret.toString('hex')}\n`, 0o600);
    const manifest: Manifest = {
      format: BUNDLE_FORMAT,
      version: BUNDLE_VERSION,
      createdAt: options.now.toISOString(),
      source: {
        database: options.databaseDescription,
        storage: options.store.location,
        schemaVersion: options.schemaVersion,
      },
      tables: manifestTables,
      files,
      secret: secret ? { sha256: createHash('sha256').update(secret).digest('hex') } : null,
      providersWithKeys: options.providersWithKeys,
    };
    // Last: a bundle without its manifest is an export that did not finish.
    await atomicWriteFile(join(out, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, 0o600);
    return { manifest };
  } catch (error) {
    await removeWritten(out, created);
    throw error;
  } finally {
    if (raw.isTransaction) raw.exec('COMMIT');
  }
}

/** The bundle directory made owner-only; refused when it holds anything. Returns whether we created it. */
async function prepareOut(out: string): Promise<boolean> {
  let entries: string[] | null = null;
  try {
    entries = await readdir(out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (entries !== null && entries.length > 0)
    throw new ExportError(`${out} is not empty: export writes a new bundle into an empty or new directory`);
  await mkdir(out, { recursive: true, mode: 0o700 });
  return entries === null;
}

/** An export that failed leaves no bundle: what it wrote goes (the directory too, when it made it). */
async function removeWritten(out: string, created: boolean): Promise<void> {
  if (created) {
    await rm(out, { recursive: true, force: true });
    return;
  }
  for (const name of ['rows', 'files', FILE_INDEX, SECRET_FILE, MANIFEST_FILE])
    await rm(join(out, name), { recursive: true, force: true });
}

function columnsOf(raw: DatabaseSync, table: string): string[] {
  const derived = DERIVED_COLUMNS[table] ?? [];
  return raw
    .prepare(`PRAGMA table_xinfo(${table})`)
    .all()
    .map((c) => c as { name: string; hidden: number })
    .filter((c) => c.hidden === 0 && !derived.includes(c.name))
    .map((c) => c.name);
}

async function exportTable(
  raw: DatabaseSync,
  table: string,
  order: string,
  out: string,
): Promise<Manifest['tables'][number]> {
  const columns = columnsOf(raw, table);
  const statement = raw.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM ${table} ORDER BY ${order}`);
  let rows = 0;
  // A plain generator: node:sqlite steps synchronously, and Readable.from takes it as it is.
  function* lines(): Generator<string> {
    let chunk = '';
    let inChunk = 0;
    for (const row of statement.iterate()) {
      const values = columns.map((c) => (row as Record<string, unknown>)[c]);
      for (const v of values)
        if (v !== null && typeof v !== 'string' && typeof v !== 'number')
          throw new ExportError(`${table}: a value of type ${typeof v} cannot be moved`);
      chunk += `${JSON.stringify(values)}\n`;
      rows++;
      if (++inChunk === ROWS_PER_CHUNK) {
        yield chunk;
        chunk = '';
        inChunk = 0;
      }
    }
    if (chunk !== '') yield chunk;
  }
  const tap = new HashTap();
  await pipeline(Readable.from(lines()), tap, createWriteStream(rowsPath(out, table), { flags: 'wx', mode: 0o600 }));
  return { name: table, columns, rows, sha256: tap.digest() };
}

/** The keys of every stored file a row of the snapshot names: items' renditions and thumbnails, received uploads' bytes. */
function* referencedKeys(raw: DatabaseSync): Generator<string> {
  for (const row of raw.prepare('SELECT id, files, thumbnail FROM media ORDER BY seq').iterate()) {
    const item = row as { id: string; files: string; thumbnail: string | null };
    if (!isMediaId(item.id)) continue;
    const names = [
      ...(JSON.parse(item.files) as Array<{ name: string }>).map((f) => f.name),
      ...(item.thumbnail === null ? [] : [item.thumbnail]),
    ];
    for (const name of new Set(names)) if (isStoredFileName(name)) yield mediaKey(item.id, name);
  }
  // The kept body only, under the key the row names: another PUT's body left under the upload's
  // prefix is an orphan, and orphans are not exported.
  const received = raw.prepare("SELECT id, received_key FROM uploads WHERE state = 'received' ORDER BY rowid");
  for (const row of received.iterate()) {
    const { id, received_key } = row as { id: string; received_key: string | null };
    const key = receivedUploadKey(id, received_key);
    if (key !== null) yield key;
  }
}

async function exportFiles(raw: DatabaseSync, store: BlobStore, out: string): Promise<Manifest['files']> {
  let count = 0;
  let bytes = 0;
  async function* index(): AsyncGenerator<string> {
    for (const key of referencedKeys(raw)) {
      const entry = await copyFile(store, key, out);
      count++;
      bytes += entry.size;
      yield `${JSON.stringify(entry)}\n`;
    }
  }
  const tap = new HashTap();
  await pipeline(Readable.from(index()), tap, createWriteStream(join(out, FILE_INDEX), { flags: 'wx', mode: 0o600 }));
  return { count, bytes, sha256: tap.digest() };
}

async function copyFile(store: BlobStore, key: string, out: string): Promise<FileEntry> {
  let read;
  try {
    read = await store.get(key);
  } catch (error) {
    if (error instanceof BlobNotFoundError)
      throw new ExportError(
        `${key} is named by a row but missing from ${store.location}: deleted since the export began (stop the ` +
          'service and export again), or lost before (clipdesk-service fsck lists such items)',
      );
    throw error;
  }
  const target = filePath(out, key);
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  const tap = new HashTap();
  await pipeline(read.stream, tap, createWriteStream(target, { flags: 'wx', mode: 0o600 }));
  return { key, size: tap.bytes, sha256: tap.digest(), contentType: read.contentType };
}
