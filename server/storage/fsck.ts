import type { BlobStore } from './blobs/index.ts';
import type { Db } from './db.ts';
import { isMediaId, isStoredFileName, isUploadId, mediaKey, receivedUploadKey } from './layout.ts';

/**
 * The reconcile of rows and stored files (`clipdesk-service fsck`). Rows and files are written in
 * an order that keeps every listed item whole (files first, row after; row deleted first, files
 * after), so what a crash, a kill or a store outage can leave is:
 * - orphans: stored files no row points at (a kill between put and commit, a delete that failed, the
 *   body of a PUT that lost its upload to another and could not delete it);
 * - rows whose files are missing (files lost or removed behind the service's back).
 *
 * The store is listed first and the rows read after: a file put during the listing belongs to a row
 * committed after it, so only rows created before the listing began are checked for missing files,
 * and only files older than `minAgeMs` are called orphans (younger ones may belong to work in
 * flight on any node: a generation between its files and its row, an upload being received).
 */
export interface FsckReport {
  /** Stored files with no row, older than the minimum age. */
  orphans: Array<{ key: string; size: number; modifiedMs: number | null }>;
  /** Stored files with no row that are younger (left alone; listed for information). */
  recent: number;
  /** Items none of whose files are stored: useless as they are. */
  lostItems: Array<{ id: string; user: string; keys: string[] }>;
  /** Items some of whose files are stored and some not (left alone: what remains still serves). */
  incompleteItems: Array<{ id: string; user: string; missing: string[] }>;
  /** Uploads marked received whose bytes are not stored. */
  lostUploads: string[];
  /** How many items and stored files were looked at. */
  checked: { items: number; files: number };
}

export interface FsckOptions {
  now: number;
  /** Files younger than this are never orphans. */
  minAgeMs: number;
}

interface MediaFilesRow {
  id: string;
  user_id: string;
  files: string;
  thumbnail: string | null;
  created_at: number;
}

export async function checkStorage(db: Db, store: BlobStore, options: FsckOptions): Promise<FsckReport> {
  const listedFrom = options.now;
  const stored = new Map<string, { size: number; modifiedMs: number | null }>();
  for (const area of ['media/', 'uploads/'])
    for await (const blob of store.list(area))
      stored.set(blob.key, { size: blob.size, modifiedMs: blob.modifiedMs ?? null });

  const items = await db.all<MediaFilesRow>('SELECT id, user_id, files, thumbnail, created_at FROM media');
  const uploads = await db.all<{ id: string; state: string; received_key: string | null }>(
    'SELECT id, state, received_key FROM uploads',
  );

  const known = new Set<string>();
  const report: FsckReport = {
    orphans: [],
    recent: 0,
    lostItems: [],
    incompleteItems: [],
    lostUploads: [],
    checked: { items: items.length, files: stored.size },
  };
  for (const item of items) {
    if (!isMediaId(item.id)) continue;
    const names = [
      ...(JSON.parse(item.files) as Array<{ name: string }>).map((f) => f.name),
      ...(item.thumbnail === null ? [] : [item.thumbnail]),
    ].filter(isStoredFileName);
    const keys = names.map((n) => mediaKey(item.id, n));
    for (const key of keys) known.add(key);
    if (item.created_at >= listedFrom) continue;
    const missing = keys.filter((k) => !stored.has(k));
    if (missing.length === 0) continue;
    if (missing.length === keys.length) report.lostItems.push({ id: item.id, user: item.user_id, keys });
    else report.incompleteItems.push({ id: item.id, user: item.user_id, missing });
  }
  for (const upload of uploads) {
    if (!isUploadId(upload.id) || upload.state !== 'received') continue;
    // Only a received upload keeps bytes, under the key its row names: a pending one's may be
    // arriving (younger than the minimum age), a completed one's were moved into its item, and any
    // other PUT's body under the upload's prefix is an orphan. A row naming a key not its own
    // (receivedUploadKey) has no bytes this service can find.
    const key = receivedUploadKey(upload.id, upload.received_key);
    if (key !== null) known.add(key);
    if (key === null || !stored.has(key)) report.lostUploads.push(upload.id);
  }
  for (const [key, blob] of stored) {
    if (known.has(key)) continue;
    const old = blob.modifiedMs === null ? options.minAgeMs === 0 : options.now - blob.modifiedMs >= options.minAgeMs;
    if (old) report.orphans.push({ key, ...blob });
    else report.recent++;
  }
  report.orphans.sort((a, b) => a.key.localeCompare(b.key));
  return report;
}

export interface RepairResult {
  removedFiles: number;
  removedItems: number;
  resetUploads: number;
}

/**
 * Repairs what checkStorage found. Orphaned files are deleted. An item none of whose files exist
 * is deleted as retention would delete it (its row goes, and with it its share of the quota); an
 * item missing only some files is left as it is. A received upload without its bytes goes back
 * to pending, so its signed URL can take the file again until it expires.
 */
export async function repairStorage(db: Db, store: BlobStore, report: FsckReport): Promise<RepairResult> {
  const result: RepairResult = { removedFiles: 0, removedItems: 0, resetUploads: 0 };
  for (const orphan of report.orphans) {
    await store.delete(orphan.key);
    result.removedFiles++;
  }
  for (const item of report.lostItems) {
    // Re-checked now: a file that reappeared (or an item retention already removed) is left alone.
    const present = await Promise.all(item.keys.map((k) => store.head(k)));
    if (present.some((p) => p !== null)) continue;
    const removed = await db.run('DELETE FROM media WHERE id = ?', item.id);
    if (Number(removed.changes) > 0) result.removedItems++;
  }
  for (const id of report.lostUploads) {
    const row = await db.get<{ received_key: string | null }>(
      "SELECT received_key FROM uploads WHERE id = ? AND state = 'received'",
      id,
    );
    if (!row) continue;
    const key = receivedUploadKey(id, row.received_key);
    if (key !== null && (await store.head(key))) continue;
    const reset = await db.run(
      "UPDATE uploads SET state = 'pending', sniffed_mime = NULL, received_key = NULL WHERE id = ? AND state = 'received'",
      id,
    );
    if (Number(reset.changes) > 0) result.resetUploads++;
  }
  return result;
}
