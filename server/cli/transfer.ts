import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PROVIDER_ENV_KEYS, isRemoteProviderId, readKeyFile } from '../providers/provider-keys.ts';
import { openBlobStore } from '../storage/blobs/index.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import { describeDatabase, openDatabase, openServiceDatabase } from '../storage/db.ts';
import { SERVICE_SCHEMA_VERSION } from '../storage/sqlite-migrations.ts';
import { BundleError } from '../storage/transfer/bundle.ts';
import { exportService } from '../storage/transfer/export.ts';
import { TargetNotEmptyError, importService, readManifest } from '../storage/transfer/import.ts';
import type { Io, LocationValues } from './commands.ts';
import { takeDataFolderLock } from '../../shared/node/data-folder-lock.ts';
import { resolveLocations } from './locations.ts';
import { UsageError } from './usage-error.ts';

/**
 * `clipdesk-service export --data DIR --out BUNDLE` and `import --from BUNDLE [--database URL]
 * [--storage URL]`: a one-machine service moved to the team setup (or anywhere else), nothing lost
 * (server/storage/transfer/). Provider keys stored with `providers set-key` are not moved: both
 * commands say which providers had one, and how to give them to the nodes.
 */
export async function exportCommand(values: LocationValues & { out?: string }, io: Io): Promise<number> {
  if (!values.out) throw new UsageError('export needs --out BUNDLE_DIR (a new or empty directory)');
  const locations = resolveLocations(values);
  const { dataDir, database } = locations;
  if (database.kind !== 'sqlite')
    throw new UsageError(
      'export reads a one-machine service (its SQLite database in --data); to copy a PostgreSQL service use pg_dump and the bucket',
    );
  if (!existsSync(join(dataDir, 'service.db'))) throw new Error(`no service database in ${dataDir}; check --data`);
  // Read only: a database at another version is refused rather than migrated here.
  let db;
  try {
    db = openDatabase(dataDir, { migrate: false });
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}. Run \`clipdesk-service migrate --data ${dataDir}\` first.`,
      { cause: error },
    );
  }
  let store: (BlobStore & { close(): void }) | undefined;
  try {
    store = await openReachableStore(locations.storage);
    const providers = await providersWithKeys(dataDir, io);
    const out = resolve(values.out);
    const { manifest } = await exportService({
      raw: db.raw,
      schemaVersion: SERVICE_SCHEMA_VERSION,
      databaseDescription: describeDatabase(dataDir),
      store,
      dataDir,
      out,
      providersWithKeys: providers,
      now: new Date(),
    });
    for (const t of manifest.tables) io.out(`${t.name}: ${t.rows} rows`);
    io.out(`files: ${manifest.files.count} (${manifest.files.bytes} bytes)`);
    io.out(`exported to ${out} (owner-only: it holds the URL signing secret and hashed API keys)`);
    printProviderNote(io, providers, 'export');
    return 0;
  } finally {
    store?.close();
    await db.close();
  }
}

export async function importCommand(values: LocationValues & { from?: string }, io: Io): Promise<number> {
  if (!values.from) throw new UsageError('import needs --from BUNDLE_DIR (what export wrote)');
  const bundle = resolve(values.from);
  const locations = resolveLocations(values);
  try {
    // A bundle that is not one is refused before the target is touched (the rest is checked in importService).
    await readManifest(bundle);
    if (locations.database.kind === 'sqlite' || locations.storage.kind === 'file')
      await mkdir(locations.dataDir, { recursive: true });
    // Never into a SQLite folder a service is serving; the lock, held to the end, keeps one from starting meanwhile.
    const lock =
      locations.database.kind === 'sqlite'
        ? takeDataFolderLock(locations.dataDir, { program: 'clipdesk-service import' })
        : null;
    // Migrated first, as `migrate` would: the target is at this build's schema before any row goes in.
    const db = await openServiceDatabase(locations.database).catch((error: unknown) => {
      lock?.release();
      throw error;
    });
    let store: (BlobStore & { close(): void }) | undefined;
    try {
      store = await openReachableStore(locations.storage);
      const result = await importService({
        bundle,
        db,
        store,
        dataDir: locations.dataDir,
        log: (line) => io.err(line),
      });
      for (const [table, rows] of Object.entries(result.rows)) io.out(`${table}: ${rows} rows`);
      io.out(`files: ${result.files.count} (${result.files.bytes} bytes)`);
      io.out(`imported into ${db.description} and ${store.location}; every count and sha256 verified`);
      printProviderNote(io, result.manifest.providersWithKeys, 'import');
      return 0;
    } finally {
      store?.close();
      await db.close();
      lock?.release();
    }
  } catch (error) {
    if (error instanceof TargetNotEmptyError) {
      io.err(`clipdesk-service: ${error.message}`);
      return 2;
    }
    if (error instanceof BundleError) {
      io.err(`clipdesk-service: the bundle is refused, nothing was imported: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

async function openReachableStore(location: Parameters<typeof openBlobStore>[0]) {
  const store = await openBlobStore(location);
  try {
    await store.check();
  } catch (error) {
    store.close();
    throw new Error(
      `the file storage ${store.location} cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return store;
}

/** Which providers had a key in the data directory's key file: names only, the keys stay there. */
async function providersWithKeys(dataDir: string, io: Io): Promise<string[]> {
  try {
    return Object.keys(await readKeyFile(dataDir)).sort();
  } catch (error) {
    io.err(`warning: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}

function printProviderNote(io: Io, providers: readonly string[], step: 'export' | 'import'): void {
  if (providers.length === 0) return;
  const vars = providers.map((p) => (isRemoteProviderId(p) ? PROVIDER_ENV_KEYS[p] : p)).join(', ');
  io.err(
    `provider keys are not ${step === 'export' ? 'exported' : 'in the bundle'}: ${providers.join(', ')} had a key set with ` +
      `\`providers set-key\` on the source. Set ${vars} in every team node's environment (or run providers set-key on each node).`,
  );
}
