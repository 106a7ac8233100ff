import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openBlobStore } from '../storage/blobs/index.ts';
import { openServiceDatabase } from '../storage/db.ts';
import { checkStorage, repairStorage } from '../storage/fsck.ts';
import type { FsckReport } from '../storage/fsck.ts';
import type { Io, LocationValues } from './commands.ts';
import { resolveLocations } from './locations.ts';
import { UsageError } from './usage-error.ts';

/** Files younger than this are work in flight, not orphans (a generation's files before its row). */
export const DEFAULT_FSCK_MIN_AGE_SECONDS = 3_600;

/**
 * `clipdesk-service fsck [--repair] [--min-age SECONDS] [--force] [--json]`: lists stored files no
 * row points at and rows whose files are missing (server/storage/fsck.ts); with --repair removes
 * the orphaned files, deletes items none of whose files exist, and sets received uploads without
 * bytes back to pending. Safe while nodes serve (the minimum age, and every repair re-checked).
 *
 * Exit 0 when nothing is wrong (or everything found was repaired), 1 when something is left.
 * Deleting items is refused (exit 1, nothing changed) when more than half of them look lost, which
 * is what a wrong --storage looks like, unless --force.
 */
export async function fsckCommand(
  values: LocationValues & { repair?: boolean; force?: boolean; json?: boolean; minAge?: string },
  io: Io,
): Promise<number> {
  const minAge = Number(values.minAge ?? DEFAULT_FSCK_MIN_AGE_SECONDS);
  if (!Number.isInteger(minAge) || minAge < 0)
    throw new UsageError(`--min-age must be a whole number of seconds, not ${values.minAge}`);
  const locations = resolveLocations(values);
  const { dataDir, database } = locations;
  // A data directory with no database has no rows: every file would look orphaned.
  if (database.kind === 'sqlite' && !existsSync(join(dataDir, 'service.db')))
    throw new Error(`no service database in ${dataDir}; check --data or --database`);
  // Never migrated here: fsck judges rows as the running nodes wrote them, and refuses a database
  // at another schema version rather than changing it.
  const db = await openServiceDatabase(database, { migrate: false });
  const store = await openBlobStore(locations.storage).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  try {
    await store.check().catch((error: unknown) => {
      throw new Error(
        `the file storage ${store.location} cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const report = await checkStorage(db, store, { now: Date.now(), minAgeMs: minAge * 1000 });
    const suspicious = report.lostItems.length > report.checked.items / 2 && !values.force;
    let repaired = null;
    if (values.repair) {
      repaired = await repairStorage(db, store, suspicious ? { ...report, lostItems: [] } : report);
    }
    if (values.json) {
      io.out(JSON.stringify({ storage: store.location, ...report, repaired }));
    } else {
      printReport(io, store.location, report);
      if (repaired)
        io.out(
          `repaired: removed ${repaired.removedFiles} orphaned file(s), deleted ${repaired.removedItems} lost item(s), ` +
            `set ${repaired.resetUploads} upload(s) back to pending`,
        );
    }
    if (values.repair && suspicious && report.lostItems.length > 0)
      io.err(
        `clipdesk-service: not deleting ${report.lostItems.length} of ${report.checked.items} items whose files are missing: ` +
          `that many usually means the wrong --storage or --data. Check them, then run fsck --repair --force.`,
      );
    const left = repaired
      ? (suspicious ? report.lostItems.length : 0) + report.incompleteItems.length
      : report.orphans.length + report.lostItems.length + report.incompleteItems.length + report.lostUploads.length;
    return left === 0 ? 0 : 1;
  } finally {
    await db.close();
    store.close();
  }
}

function printReport(io: Io, location: string, r: FsckReport): void {
  io.out(`checked ${r.checked.items} item(s) and ${r.checked.files} stored file(s) in ${location}`);
  for (const o of r.orphans)
    io.out(
      `orphaned file: ${o.key} (${o.size} bytes${o.modifiedMs === null ? '' : `, written ${new Date(o.modifiedMs).toISOString()}`})`,
    );
  for (const i of r.lostItems) io.out(`item with no stored files: ${i.id} (user ${i.user}): ${i.keys.join(', ')}`);
  for (const i of r.incompleteItems)
    io.out(`item missing some files (left alone): ${i.id} (user ${i.user}): ${i.missing.join(', ')}`);
  for (const id of r.lostUploads) io.out(`received upload without its bytes: ${id}`);
  if (r.recent > 0)
    io.out(`${r.recent} file(s) without a row are younger than --min-age (work in flight; not counted)`);
  const problems = r.orphans.length + r.lostItems.length + r.incompleteItems.length + r.lostUploads.length;
  io.out(problems === 0 ? 'no problems found' : `${problems} problem(s) found`);
}
