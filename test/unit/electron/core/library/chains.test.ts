import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createLibraryStore,
  openDatabase,
  readSidecarLineages,
  SidecarLineage,
  sidecarLineage,
  writeSidecarLineage,
} from '../../../../../electron/core/library/index.ts';
import { schemaVersion } from '../../../../../shared/node/migrations.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'library-chains-'));
  dirs.push(dir);
  return dir;
}
function store(dir = tempDir()) {
  let t = 1_000;
  return createLibraryStore({ db: openDatabase(join(dir, 'library.db')), now: () => t++, retentionDays: () => 30 });
}
const SHA = 'a'.repeat(64);

describe('shot chains in the library index', () => {
  it('has its tables from schema version 2 on (the index is at 3)', () => {
    const db = store().db;
    expect(schemaVersion(db)).toBe(3);
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'library_shot%' AND type = 'table'")
      .all();
    expect(tables.map((t) => (t as { name: string }).name).sort()).toEqual(['library_shot_jobs', 'library_shots']);
  });

  it('continuing shots makes one chain in order; the parent becomes its first shot', () => {
    const s = store();
    const b = s.chains.continueShot('b', 'a', { sha256: SHA, image: 'clipdesk-media:up1' });
    expect(b.root).toMatchObject({ itemId: 'a', chainId: 'a', position: 1, parentId: null });
    expect(b.shot).toMatchObject({ itemId: 'b', chainId: 'a', position: 2, parentId: 'a', sourceSha256: SHA });
    const c = s.chains.continueShot('c', 'b', { sha256: null, image: null });
    expect(c.root).toBeNull();
    expect(s.chains.chainOf('c').map((x) => [x.itemId, x.position, x.parentId])).toEqual([
      ['a', 1, null],
      ['b', 2, 'a'],
      ['c', 3, 'b'],
    ]);
    // Recording the same result again (a download retried) changes nothing.
    expect(s.chains.continueShot('c', 'b', { sha256: SHA, image: null }).shot.position).toBe(3);
    expect(s.chains.chain('a')).toHaveLength(3);
  });

  it('continuing a shot that already has a successor starts a branch that names its parent', () => {
    const s = store();
    s.chains.continueShot('b', 'a', { sha256: null, image: null });
    const branch = s.chains.continueShot('b2', 'a', { sha256: null, image: null }).shot;
    expect(branch).toMatchObject({ chainId: 'b2', position: 1, parentId: 'a' });
    expect(s.chains.chain('a').map((x) => x.itemId)).toEqual(['a', 'b']);
  });

  it('badges only chains of two or more', () => {
    const s = store();
    s.chains.setTrim('solo', { start: 0, end: 1 });
    s.chains.continueShot('b', 'a', { sha256: null, image: null });
    const badges = s.chains.badges(['a', 'b', 'solo', 'none']);
    expect(Object.fromEntries(badges)).toEqual({
      a: { chainId: 'a', position: 1, length: 2 },
      b: { chainId: 'a', position: 2, length: 2 },
    });
  });

  it('keeps trims, and refuses an out point before the in point', () => {
    const s = store();
    s.chains.continueShot('b', 'a', { sha256: null, image: null });
    expect(s.chains.setTrim('b', { start: 0.5, end: 1.5 }).trim).toEqual({ start: 0.5, end: 1.5 });
    expect(() => s.chains.setTrim('b', { start: 2, end: 1 })).toThrow(/after the in point/);
    expect(s.chains.setTrim('b', null).trim).toBeNull();
  });

  it('moves a shot to another place in its chain: the others close up, parents and trims stay', () => {
    const s = store();
    s.chains.continueShot('b', 'a', { sha256: null, image: null });
    s.chains.continueShot('c', 'b', { sha256: null, image: null });
    s.chains.setTrim('c', { start: 0.5, end: 1 });
    const moved = s.chains.moveShot('c', 1);
    expect(moved.map((x) => [x.itemId, x.position, x.parentId])).toEqual([
      ['c', 1, 'b'],
      ['a', 2, null],
      ['b', 3, 'a'],
    ]);
    expect(s.chains.get('c')?.trim).toEqual({ start: 0.5, end: 1 });
    // The chain keeps its id (its first shot's when it began), so tiles and sequences still find it.
    expect(s.chains.chain('a').map((x) => x.itemId)).toEqual(['c', 'a', 'b']);
    expect(s.chains.moveShot('c', 3).map((x) => x.itemId)).toEqual(['a', 'b', 'c']);
    // A place past either end is the end; the same place changes nothing.
    expect(s.chains.moveShot('a', 99).map((x) => x.itemId)).toEqual(['b', 'c', 'a']);
    expect(s.chains.moveShot('a', 3).map((x) => x.position)).toEqual([1, 2, 3]);
    expect(() => s.chains.moveShot('nope', 1)).toThrow(/not a shot of a chain/);
  });

  it('remembers which item a job continues until it is forgotten', () => {
    const s = store();
    s.chains.rememberJob('job1', 'a');
    expect(s.chains.jobParent('job1')).toBe('a');
    s.chains.forgetJob('job1');
    expect(s.chains.jobParent('job1')).toBeNull();
  });
});

describe('lineage in sidecars', () => {
  it('round-trips: written into a sidecar, read back, restored into an empty index', async () => {
    const dir = tempDir();
    const s = store();
    s.chains.continueShot('b', 'a', { sha256: SHA, image: 'clipdesk-media:up1' });
    s.chains.continueShot('c', 'b', { sha256: 'b'.repeat(64), image: null });
    s.chains.setTrim('c', { start: 0.25, end: 1 });
    // Only the later shots have sidecars with lineage: the first shot's is inferred.
    for (const id of ['b', 'c']) {
      writeFileSync(join(dir, `${id}.mp4.json`), JSON.stringify({ id, prompt: 'p', sourceImage: null }));
      expect(await writeSidecarLineage(join(dir, `${id}.mp4.json`), s.chains.get(id)!)).toBe(true);
    }
    writeFileSync(join(dir, 'other.json'), '{"not":"a sidecar"}');
    writeFileSync(join(dir, 'broken.json'), '{');
    const b = JSON.parse(readFileSync(join(dir, 'b.mp4.json'), 'utf8')) as Record<string, unknown>;
    expect(b['lineage']).toEqual({ chainId: 'a', position: 2, parentId: 'a', sourceImageSha256: SHA, trim: null });
    expect(b['sourceImage']).toBe('clipdesk-media:up1');
    expect(SidecarLineage.parse(b['lineage'])).toEqual(sidecarLineage(s.chains.get('b')!));

    const found = await readSidecarLineages(dir);
    expect(found.map((f) => f.itemId).sort()).toEqual(['b', 'c']);
    const rebuilt = store();
    expect(rebuilt.chains.restore(found)).toBe(3);
    expect(rebuilt.chains.chainOf('a').map((x) => [x.itemId, x.position, x.parentId, x.sourceSha256, x.trim])).toEqual([
      ['a', 1, null, null, null],
      ['b', 2, 'a', SHA, null],
      ['c', 3, 'b', 'b'.repeat(64), { start: 0.25, end: 1 }],
    ]);
    expect(rebuilt.chains.get('b')!.sourceImage).toBe('clipdesk-media:up1');
    // Restoring again adds nothing and keeps what is there.
    expect(rebuilt.chains.restore(found)).toBe(0);
  });
});
