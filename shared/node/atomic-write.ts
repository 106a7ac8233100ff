import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file so that readers only ever see the old content or the complete new content:
 * write a temp file beside it, fsync, then rename over the target (atomic on one filesystem).
 * A crash mid-write leaves at most a `.tmp-*` file, never a half-written target.
 */
export async function atomicWriteFile(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.tmp-${basename(path)}-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'w', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Moves a finished file or directory into place. Both paths must be on the same filesystem, so
 * the move is a rename: the target appears complete or not at all.
 */
export async function moveIntoPlace(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  await rename(from, to);
}
