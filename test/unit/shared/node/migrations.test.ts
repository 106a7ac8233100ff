import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, schemaVersion, SchemaTooNewError } from '../../../../shared/node/migrations.ts';
import type { Migration } from '../../../../shared/node/migrations.ts';
import { openSqlite } from '../../../../shared/node/sqlite.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb() {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  dirs.push(dir);
  return join(dir, 'x.db');
}

const steps: Migration[] = [
  { version: 1, name: 'a', up: (db) => db.exec('CREATE TABLE a (x INTEGER)') },
  { version: 3, name: 'b', up: (db) => db.exec('ALTER TABLE a ADD COLUMN y TEXT') },
];

describe('migrate', () => {
  it('applies pending steps in order once, and is idempotent', () => {
    const db = openSqlite(tempDb());
    expect(migrate(db, 'test db', steps)).toEqual([1, 3]);
    expect(schemaVersion(db)).toBe(3);
    expect(migrate(db, 'test db', steps)).toEqual([]);
    db.prepare('INSERT INTO a (x, y) VALUES (1, ?)').run('ok');
  });

  it('two connections migrating one file apply each step once', () => {
    const path = tempDb();
    const a = openSqlite(path);
    const b = openSqlite(path);
    expect(migrate(a, 'a', steps.slice(0, 1))).toEqual([1]);
    expect([...migrate(b, 'b', steps), ...migrate(a, 'a', steps)]).toEqual([3]);
  });

  it('a failing step rolls back and leaves the version where it was', () => {
    const db = openSqlite(tempDb());
    const broken: Migration = {
      version: 2,
      name: 'broken',
      up: (d) => {
        d.exec('CREATE TABLE half (x INTEGER)');
        throw new Error('boom');
      },
    };
    expect(() => migrate(db, 'test db', [steps[0]!, broken])).toThrow('boom');
    expect(schemaVersion(db)).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
  });

  it('refuses a database written by a newer program', () => {
    const db = openSqlite(tempDb());
    db.exec('PRAGMA user_version = 9');
    expect(() => migrate(db, 'the test db', steps)).toThrow(SchemaTooNewError);
    expect(() => migrate(db, 'the test db', steps)).toThrow(/the test db has schema version 9, newer than the 3/);
  });

  it('refuses two steps with one version', () => {
    const db = openSqlite(tempDb());
    expect(() => migrate(db, 'x', [steps[0]!, { ...steps[1]!, version: 1 }])).toThrow(/share version 1/);
  });
});
