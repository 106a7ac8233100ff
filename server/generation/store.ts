import type { PipelineFile } from '../pipeline/types.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import type { NewMedia } from '../storage/media-repo.ts';
import type { StoredFile } from '../storage/media-rows.ts';
import { insertMedia } from '../storage/media-repo.ts';
import type { Db } from '../storage/db.ts';
import { extensionFor } from '../storage/file-types.ts';
import { mediaKey, mediaPrefix } from '../storage/layout.ts';

export { extensionFor };

/**
 * The "store" step, in two halves so that every item of a generation (and its idempotency record)
 * is committed in one transaction. placeItem puts an item's files into the blob store under
 * media/<id>/ (on disk a rename out of the work directory under tmp/, nothing copied); insertItems
 * then inserts the rows, together with the charge to the key. No row exists before its files are
 * stored. A failure removes what was put (removeItemFiles); a kill between put and commit leaves
 * files no row points at, which nothing lists: startup removes them on disk, `fsck` in a bucket.
 */
export async function placeItem(
  blobs: BlobStore,
  logger: Logger,
  formats: PipelineFile[],
  thumbnail: PipelineFile | null,
  row: Omit<NewMedia, 'files' | 'thumbnail' | 'bytes' | 'mime'>,
): Promise<NewMedia> {
  const base = row.kind === 'video' ? 'video' : 'image';
  const files: StoredFile[] = formats.map((f) => ({
    name: `${base}.${extensionFor(f.mime)}`,
    mime: f.mime,
    bytes: f.bytes,
  }));
  const thumbName = thumbnail ? `thumbnail.${extensionFor(thumbnail.mime)}` : null;
  const primary = files[0];
  if (!primary) throw new Error('the pipeline produced no files');
  const puts = [
    ...formats.map((f, i) => ({ path: f.path, name: files[i]?.name ?? '', mime: f.mime })),
    ...(thumbnail && thumbName ? [{ path: thumbnail.path, name: thumbName, mime: thumbnail.mime }] : []),
  ];
  // Every put settles before any cleanup: one failing early must not leave another landing after it.
  const settled = await Promise.allSettled(
    puts.map((p) => blobs.putFile(mediaKey(row.id, p.name), p.path, { contentType: p.mime, removeSource: true })),
  );
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    await removeItemFiles(blobs, logger, row.id);
    throw failed.reason;
  }
  const bytes = files.reduce((n, f) => n + f.bytes, 0) + (thumbnail?.bytes ?? 0);
  return { ...row, files, thumbnail: thumbName, bytes, mime: primary.mime };
}

/**
 * Removes every stored file of an item (those its row names, and any a failed put left), by
 * listing its prefix: a row already deleted, or never inserted, need not say which files it had.
 * Never throws: a file it cannot remove now is an orphan `fsck` lists.
 */
export async function removeItemFiles(blobs: BlobStore, logger: Logger, id: string): Promise<void> {
  try {
    const keys: string[] = [];
    for await (const blob of blobs.list(mediaPrefix(id))) keys.push(blob.key);
    await Promise.all(keys.map((key) => blobs.delete(key)));
  } catch (error) {
    logger.warn(
      `could not remove the files of ${id} (fsck lists them): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Inserts placed items and charges their keys. `tx`: the handle of the transaction they commit in. */
export async function insertItems(tx: Db, rows: readonly NewMedia[]): Promise<void> {
  for (const row of rows) {
    await insertMedia(tx, row);
    if (row.key_id !== null && row.price > 0) {
      await tx.run('UPDATE api_keys SET cost = cost + ? WHERE id = ?', row.price, row.key_id);
    }
  }
}
