import { randomBytes } from 'node:crypto';
import { copyFile, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sql } from '../../storage/sql/types.ts';

/**
 * Where the operator catalog is kept (docs/providers.md, "Syncing the catalog"): `DATA/catalog.json`
 * on one machine (SQLite), the `operator_catalog` row on PostgreSQL (schema-v15.sql), which every
 * node of the database reads. Writes are atomic and keep the previous document; a version token
 * tells a running service that the catalog changed.
 */
export const OPERATOR_CATALOG_FILE = 'catalog.json';
export const PREVIOUS_CATALOG_FILE = 'catalog.previous.json';

export interface OperatorCatalogStore {
  /** Where it is, for messages: the file's path or the database. */
  readonly where: string;
  /** The document's text; undefined when there is none. */
  read(): Promise<{ text: string; where: string } | undefined>;
  /** Replaces it atomically, keeping the one before as the previous document. */
  write(text: string): Promise<void>;
  /** Changes whenever the document does (undefined: none yet). */
  version(): Promise<string | undefined>;
}

export function operatorCatalogStore(dataDir: string, db?: Sql): OperatorCatalogStore {
  const disk = diskStore(dataDir);
  return db?.dialect === 'postgres' ? databaseStore(db, disk) : disk;
}

function diskStore(dataDir: string): OperatorCatalogStore {
  const file = join(dataDir, OPERATOR_CATALOG_FILE);
  return {
    where: file,
    async read() {
      try {
        return { text: await readFile(file, 'utf8'), where: file };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async write(text) {
      const temp = join(dataDir, `.${OPERATOR_CATALOG_FILE}.${randomBytes(6).toString('hex')}.tmp`);
      try {
        const handle = await open(temp, 'wx', 0o644);
        try {
          await handle.writeFile(text, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        await copyFile(file, join(dataDir, PREVIOUS_CATALOG_FILE)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        await rename(temp, file);
      } finally {
        await rm(temp, { force: true });
      }
      // The rename itself reaches the disk with the directory.
      const dir = await open(dataDir, 'r').catch(() => undefined);
      await dir?.sync().catch(() => undefined);
      await dir?.close();
    },
    async version() {
      try {
        const s = await stat(file, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}`;
      } catch {
        return undefined;
      }
    },
  };
}

/** PostgreSQL: the row; without one yet, the data directory's file (as before the first sync). */
function databaseStore(db: Sql, disk: OperatorCatalogStore): OperatorCatalogStore {
  return {
    where: 'the database (operator_catalog)',
    async read() {
      const row = await db.get<{ document: string }>('SELECT document FROM operator_catalog WHERE id = 1');
      return row ? { text: row.document, where: 'the database (operator_catalog)' } : await disk.read();
    },
    async write(text) {
      const previous = (await this.read())?.text ?? null;
      await db.run(
        `INSERT INTO operator_catalog (id, document, previous, updated_at) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET previous = operator_catalog.document, document = excluded.document,
         updated_at = GREATEST(excluded.updated_at, operator_catalog.updated_at + 1)`,
        text,
        previous,
        Date.now(),
      );
    },
    async version() {
      const row = await db.get<{ updated_at: string | number }>('SELECT updated_at FROM operator_catalog WHERE id = 1');
      return row ? `db:${String(row.updated_at)}` : disk.version();
    },
  };
}
