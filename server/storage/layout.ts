import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Where files live under the data directory. Every path is built from ids and names this module
 * generated or validated: never from raw user input.
 *
 *   media/<mediaId>/<file>            finished items; a directory appears whole (renamed from tmp/)
 *   uploads/<uploadId>/put-<putId>    a PUT's received body, until the upload is completed; the
 *                                     upload's row names the one kept (uploads.received_key)
 *   uploads/<uploadId>/data           the same, for uploads received before rows named it
 *   tmp/                              work directories; emptied at startup (a crash leaves only this)
 */
const ID = /^(med|upl)_[0-9a-f]{24}$/;
const PUT_ID = /^[0-9a-f]{24}$/;
const FILE_NAME = /^[a-z0-9][a-z0-9_-]{0,40}\.[a-z0-9]{2,5}$/;

export function newMediaId(): string {
  return `med_${randomBytes(12).toString('hex')}`;
}

export function newUploadId(): string {
  return `upl_${randomBytes(12).toString('hex')}`;
}

/** Names one PUT of an upload (its claim, server/uploads/receive-claim.ts, and the key of its body). */
export function newPutId(): string {
  return randomBytes(12).toString('hex');
}

export function isMediaId(id: string): boolean {
  return ID.test(id) && id.startsWith('med_');
}

export function isUploadId(id: string): boolean {
  return ID.test(id) && id.startsWith('upl_');
}

export function isStoredFileName(name: string): boolean {
  return FILE_NAME.test(name);
}

/**
 * Storage keys (server/storage/blobs/): the same names as the paths above, so the disk store on
 * the data directory is today's layout and a bucket mirrors it.
 */
export function mediaKey(id: string, file: string): string {
  if (!isMediaId(id)) throw new Error(`not a media id: ${id}`);
  if (!isStoredFileName(file)) throw new Error(`not a stored file name: ${file}`);
  return `media/${id}/${file}`;
}

/** Every key of an item's files starts with this. */
export function mediaPrefix(id: string): string {
  if (!isMediaId(id)) throw new Error(`not a media id: ${id}`);
  return `media/${id}/`;
}

/** Every key of an upload's received bodies starts with this. */
export function uploadPrefix(id: string): string {
  if (!isUploadId(id)) throw new Error(`not an upload id: ${id}`);
  return `uploads/${id}/`;
}

/**
 * Where one PUT stores the body it receives: a key of its own, so that two PUTs whose bodies both
 * reach the store (a claim voided by a database restart at the wrong moment, see
 * server/uploads/receive-claim.ts) never write the same object. Marking the upload received records
 * the key of the one kept (uploads.received_key).
 */
export function uploadPutKey(id: string, put: string): string {
  if (!PUT_ID.test(put)) throw new Error(`not a PUT id: ${put}`);
  return `${uploadPrefix(id)}put-${put}`;
}

/**
 * The key of an upload's received bytes: the one its row records, or `uploads/<id>/data` for a row
 * that records none (received before the row named the key: SQLite schema version 12, PostgreSQL 13),
 * where every PUT of an upload stored its body. Null when the recorded key is not one of this
 * upload's (a row this build did not write), so that nothing reads or deletes another's file by it.
 */
export function receivedUploadKey(id: string, recorded: string | null): string | null {
  if (!isUploadId(id)) return null;
  if (recorded === null) return `${uploadPrefix(id)}data`;
  const put = recorded.startsWith(uploadPrefix(id)) ? recorded.slice(uploadPrefix(id).length) : '';
  return put.startsWith('put-') && PUT_ID.test(put.slice(4)) ? recorded : null;
}

export class Layout {
  readonly dataDir: string;
  readonly mediaDir: string;
  readonly uploadsDir: string;
  readonly tmpDir: string;

  constructor(dataDir: string) {
    this.dataDir = dataDir;
    this.mediaDir = join(dataDir, 'media');
    this.uploadsDir = join(dataDir, 'uploads');
    this.tmpDir = join(dataDir, 'tmp');
  }

  async prepare(): Promise<void> {
    // Whatever is in tmp/ belongs to work that did not finish (a crash or a kill): drop it.
    await rm(this.tmpDir, { recursive: true, force: true });
    await Promise.all([this.mediaDir, this.uploadsDir, this.tmpDir].map((d) => mkdir(d, { recursive: true })));
  }

  /** Where the disk store keeps an upload's received bodies (their keys start with uploadPrefix). */
  uploadDir(id: string): string {
    if (!isUploadId(id)) throw new Error(`not an upload id: ${id}`);
    return join(this.uploadsDir, id);
  }

  async makeWorkDir(label: string): Promise<string> {
    const dir = join(this.tmpDir, `${label}-${randomBytes(8).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Media directories with no database row: a kill between rename and insert. */
  async removeOrphans(known: (id: string) => boolean | Promise<boolean>): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.mediaDir)) {
      if (!isMediaId(name) || !(await known(name))) {
        await rm(join(this.mediaDir, name), { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }
}
