import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Where files live under the data directory. Every path is built from ids and names this module
 * generated or validated: never from raw user input.
 *
 *   media/<mediaId>/<file>   finished items; a directory appears whole (renamed from tmp/)
 *   uploads/<uploadId>/data  received upload bytes, until the upload is completed
 *   tmp/                     work directories; emptied at startup (a crash leaves only this)
 */
const ID = /^(med|upl)_[0-9a-f]{24}$/;
const FILE_NAME = /^[a-z0-9][a-z0-9_-]{0,40}\.[a-z0-9]{2,5}$/;

export function newMediaId(): string {
  return `med_${randomBytes(12).toString('hex')}`;
}

export function newUploadId(): string {
  return `upl_${randomBytes(12).toString('hex')}`;
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

export function uploadKey(id: string): string {
  if (!isUploadId(id)) throw new Error(`not an upload id: ${id}`);
  return `uploads/${id}/data`;
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

  /** Where the disk store keeps an upload's received bytes (its key: uploadKey). */
  uploadPath(id: string): string {
    if (!isUploadId(id)) throw new Error(`not an upload id: ${id}`);
    return join(this.uploadsDir, id, 'data');
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
