import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORPCError } from '@orpc/client';
import { createPathGrants } from '../../../../electron/app/path-grants.ts';

let dir: string;
let downloads: string;
let work: string;
let outside: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-grants-'));
  downloads = path.join(dir, 'downloads');
  work = path.join(dir, 'work');
  await mkdir(path.join(downloads, '2026-01'), { recursive: true });
  await mkdir(work, { recursive: true });
  outside = path.join(dir, 'elsewhere', 'secret.txt');
  await mkdir(path.dirname(outside), { recursive: true });
  await writeFile(outside, 'not for the renderer');
  await writeFile(path.join(downloads, '2026-01', 'clip.mp4'), 'x');
  await writeFile(path.join(work, 'frame.png'), 'x');
  await symlink(outside, path.join(downloads, 'escape.txt'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof ORPCError ? String(error.code) : String(error);
  }
}

describe('path grants: which local paths the renderer may name', () => {
  const grants = () => createPathGrants(() => [downloads, work]);

  it('accepts files under the download and media folders', async () => {
    const g = grants();
    expect(await g.check(path.join(downloads, '2026-01', 'clip.mp4'))).toBe(
      path.join(downloads, '2026-01', 'clip.mp4'),
    );
    expect(await g.check(path.join(work, 'frame.png'))).toBe(path.join(work, 'frame.png'));
  });

  it('refuses any other file, whether or not it exists, until the preload reports it', async () => {
    const g = grants();
    expect(await code(g.check(outside))).toBe('forbidden');
    expect(await code(g.check(path.join(dir, 'elsewhere', 'missing.txt')))).toBe('forbidden');
    expect(g.grant(outside)).toBe(true);
    expect(await g.check(outside)).toBe(outside);
    // A grant is for that exact file, not its folder.
    expect(await code(g.check(path.join(dir, 'elsewhere', 'other.txt')))).toBe('forbidden');
  });

  it('refuses traversal out of a folder, a symlink that leaves it, relative paths and NUL', async () => {
    const g = grants();
    expect(await code(g.check(path.join(downloads, '..', 'elsewhere', 'secret.txt')))).toBe('forbidden');
    expect(await code(g.check(path.join(downloads, 'escape.txt')))).toBe('forbidden');
    expect(await code(g.check(downloads))).toBe('forbidden');
    expect(await code(g.check('elsewhere/secret.txt'))).toBe('forbidden');
    expect(await code(g.check(`${outside}\0`))).toBe('forbidden');
    expect(g.grant('relative/path.png')).toBe(false);
    expect(g.grant(`${outside}\0.png`)).toBe(false);
    expect(g.grant('')).toBe(false);
  });

  it('keeps only the most recent grants', async () => {
    const g = createPathGrants(() => [], 2);
    g.grant('/a/1.png');
    g.grant('/a/2.png');
    g.grant('/a/3.png');
    expect(await code(g.check('/a/1.png'))).toBe('forbidden');
    expect(await g.check('/a/3.png')).toBe('/a/3.png');
  });
});
