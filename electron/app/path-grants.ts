import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ipcError } from './errors.ts';

/**
 * Which local paths the renderer may hand to main (uploads.fromPath, uploads.probe, a job's
 * `startFrame` or `endFrame: {kind:'path'}`).
 *
 * A dropped file can live anywhere, so paths cannot be limited to known folders. Instead main
 * accepts a path only if:
 * - the preload resolved it from a real File (`webUtils.getPathForFile`, which only answers for
 *   files the user dropped or picked) and reported it to main before handing it to the page; a
 *   compromised page cannot forge such a File, and cannot reach that channel itself (context
 *   isolation), so it can only name files the user gave it; or
 * - it is under one of main's own folders (the download folder, the app's media folder: exported
 *   frames, "use last frame"), symlinks followed.
 *
 * Browser mode has no preload, so only the second rule applies there: a dropped file arrives as
 * bytes (uploads.fromBytes).
 */
/** A path from the renderer → the path to use, or a `forbidden` error. */
export type PathCheck = (file: string) => Promise<string>;

export interface PathGrants {
  /** Records a path the preload resolved from a real File. False when it is not a plain absolute path. */
  grant(file: string): boolean;
  /** The path to use, or a `forbidden` IPC error. Never says whether a refused file exists. */
  check(file: string): Promise<string>;
}

/** The most recent grants kept; older ones are forgotten (a drop is used right away). */
const MAX_GRANTS = 256;

export function createPathGrants(roots: () => readonly string[], max = MAX_GRANTS): PathGrants {
  const granted = new Set<string>();
  const plain = (file: unknown): file is string =>
    typeof file === 'string' && file.length > 0 && file.length <= 4096 && !file.includes('\0') && path.isAbsolute(file);
  const refuse = (): Error =>
    ipcError(
      'forbidden',
      'This file was not dropped or picked in this window, and is not in the library or download folder. Drop it again.',
    );
  return {
    grant(file) {
      if (!plain(file)) return false;
      const resolved = path.resolve(file);
      granted.delete(resolved);
      granted.add(resolved);
      if (granted.size > max) granted.delete(granted.values().next().value!);
      return true;
    },
    async check(file) {
      if (!plain(file)) throw refuse();
      const resolved = path.resolve(file);
      if (granted.has(resolved)) return resolved;
      const real = await realpath(resolved).catch(() => null);
      if (real === null) throw refuse();
      for (const root of roots()) {
        const realRoot = await realpath(path.resolve(root)).catch(() => null);
        if (realRoot !== null && isInside(realRoot, real)) return real;
      }
      throw refuse();
    },
  };
}

function isInside(base: string, target: string): boolean {
  const rel = path.relative(base, target);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
