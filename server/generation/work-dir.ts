import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A new directory `name` in `parent` (a render's, an item's), made if missing. */
export async function subDir(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  return dir;
}
