import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../../server/storage/db.ts';
import { BundleError, HashCheck, hashLines } from '../../../../server/storage/transfer/bundle.ts';
import { MOVED_TABLES, unknownTables } from '../../../../server/storage/transfer/tables.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-transfer-'));
  dirs.push(dir);
  return dir;
}

describe('what export moves', () => {
  it('every table of the SQLite schema is moved, ephemeral or derived: a new table must be classified', async () => {
    const dir = await tempDir();
    const db = openDatabase(dir);
    try {
      const names = (await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map(
        (r) => r.name,
      );
      expect(unknownTables(names)).toEqual([]);
      for (const t of MOVED_TABLES) expect(names).toContain(t.name);
      expect(unknownTables([...names, 'new_feature'])).toEqual(['new_feature']);
    } finally {
      await db.close();
    }
  });
});

describe('the bundle checks', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const through = (text: string, expected: { size: number; sha256: string }) =>
    pipeline(
      Readable.from([Buffer.from(text)]),
      new HashCheck({ ...expected, what: 'files/x' }),
      new Writable({ write: (_c, _e, done) => done() }),
    );

  it('HashCheck passes exact bytes and fails a changed, longer or shorter stream at its end', async () => {
    await expect(through('hello', { size: 5, sha256: sha('hello') })).resolves.toBeUndefined();
    await expect(through('hellO', { size: 5, sha256: sha('hello') })).rejects.toThrow(/does not match its sha256/);
    await expect(through('hello!', { size: 5, sha256: sha('hello') })).rejects.toBeInstanceOf(BundleError);
    await expect(through('hell', { size: 5, sha256: sha('hello') })).rejects.toThrow(/has 4 bytes; the bundle lists 5/);
  });

  it('hashLines counts the lines of a rows file and hashes its bytes', async () => {
    const path = join(await tempDir(), 'rows.ndjson');
    const text = '["a",1]\n["b",null]\n["ü",2.5]\n';
    await writeFile(path, text);
    expect(await hashLines(path, 'rows')).toEqual({ sha256: sha(text), lines: 3 });
    expect(await readFile(path, 'utf8')).toBe(text);
    await expect(hashLines(join(path, 'missing'), 'rows/x.ndjson')).rejects.toThrow(/rows\/x\.ndjson/);
  });
});
