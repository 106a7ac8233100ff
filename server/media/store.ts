import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { PipelineFile } from '../pipeline/types.ts';
import type { ServiceContext } from '../context.ts';
import { moveIntoPlace } from '../../shared/node/atomic-write.ts';
import type { NewMedia, StoredFile } from '../storage/media-repo.ts';
import { insertMedia } from '../storage/media-repo.ts';
import type { Db } from '../storage/db.ts';
import { extensionFor } from '../storage/file-types.ts';

export { extensionFor };

/**
 * The "store" step, in two halves so that every item of a generation (and its idempotency record)
 * is committed in one transaction. placeItem gathers an item's files in a directory under tmp/ and
 * renames it into media/<id> (it appears whole or not at all); insertItems then inserts the rows,
 * together with the charge to the key. A kill before the rename leaves only tmp/ (emptied at
 * startup); a kill between rename and commit leaves orphan directories (removed at startup).
 * Neither is visible.
 */
export async function placeItem(
  ctx: ServiceContext,
  workDir: string,
  formats: PipelineFile[],
  thumbnail: PipelineFile | null,
  row: Omit<NewMedia, 'files' | 'thumbnail' | 'bytes' | 'mime'>,
): Promise<NewMedia> {
  const staging = join(workDir, `store-${row.id}`);
  await mkdir(staging, { recursive: true });
  const base = row.kind === 'video' ? 'video' : 'image';
  const files: StoredFile[] = [];
  for (const f of formats) {
    const name = `${base}.${extensionFor(f.mime)}`;
    await rename(f.path, join(staging, name));
    files.push({ name, mime: f.mime, bytes: f.bytes });
  }
  let thumbName: string | null = null;
  if (thumbnail) {
    thumbName = `thumbnail.${extensionFor(thumbnail.mime)}`;
    await rename(thumbnail.path, join(staging, thumbName));
  }
  const primary = files[0];
  if (!primary) throw new Error('the pipeline produced no files');
  await moveIntoPlace(staging, ctx.layout.mediaPath(row.id));
  const bytes = files.reduce((n, f) => n + f.bytes, 0) + (thumbnail?.bytes ?? 0);
  return { ...row, files, thumbnail: thumbName, bytes, mime: primary.mime };
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
