import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobJournal, openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import { schemaVersion, SchemaTooNewError } from '../../../../../shared/node/migrations.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'journal-schema-'));
  dirs.push(dir);
  return join(dir, 'jobs.db');
}

// The schema exactly as the journal wrote it before it had a version (its first release, before
// jobs could be removed; the later release added removed_at by an ALTER on open).
const OLD_SCHEMA = `
    CREATE TABLE IF NOT EXISTS jobs (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      state TEXT NOT NULL,
      request TEXT NOT NULL,
      start_frame TEXT,
      position REAL NOT NULL,
      idempotency_key TEXT,
      submitted_at INTEGER,
      attempts INTEGER NOT NULL DEFAULT 0,
      not_before INTEGER,
      error TEXT,
      result TEXT,
      downloads TEXT NOT NULL DEFAULT '[]',
      batch_id TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS jobs_state_position ON jobs (state, position);
    CREATE TABLE IF NOT EXISTS job_transitions (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      job_id TEXT NOT NULL,
      from_state TEXT,
      to_state TEXT NOT NULL,
      at INTEGER NOT NULL,
      detail TEXT
    );
    CREATE INDEX IF NOT EXISTS job_transitions_job ON job_transitions (job_id, seq);
`;
const T0 = Date.UTC(2026, 0, 1);

function oldJournal(path: string, withRemovedAt: boolean): DatabaseSync {
  const db = openJournalDatabase(path);
  db.exec(OLD_SCHEMA);
  if (withRemovedAt) db.exec('ALTER TABLE jobs ADD COLUMN removed_at INTEGER');
  const request = JSON.stringify({ model: 'clipdesk/motion', prompt: 'old' });
  for (const id of ['j1', 'j2']) {
    db.prepare(
      `INSERT INTO jobs (id, kind, state, request, position, created_at, updated_at) VALUES (?, 'video', 'queued', ?, ?, ?, ?)`,
    ).run(id, request, id === 'j1' ? 1 : 2, T0, T0);
    db.prepare(`INSERT INTO job_transitions (job_id, from_state, to_state, at) VALUES (?, NULL, 'queued', ?)`).run(
      id,
      T0,
    );
  }
  if (withRemovedAt) db.exec(`UPDATE jobs SET state = 'canceled', removed_at = ${T0} WHERE id = 'j2'`);
  return db;
}

const schemaOf = (db: DatabaseSync) =>
  db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();

describe('job journal schema versions', () => {
  it('a journal of the last unversioned release opens with its jobs; versions 2 to 5 only add columns', () => {
    const db = oldJournal(dbPath(), true);
    const before = schemaOf(db).filter((o) => (o as { name: string }).name !== 'jobs');
    const journal = createJobJournal({ db, now: () => T0 });
    expect(schemaVersion(db)).toBe(5);
    expect(schemaOf(db).filter((o) => (o as { name: string }).name !== 'jobs')).toEqual(before);
    const columns = (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(
      expect.arrayContaining(['removed_at', 'generation_id', 'variation_of', 'route', 'submit_at', 'end_frame']),
    );
    expect(journal.all()[0]).toMatchObject({
      generationId: null,
      variationOf: null,
      route: null,
      submitAt: null,
      endFrame: null,
    });
    expect(journal.all().map((j) => j.id)).toEqual(['j1']);
    expect(journal.transitions('j1')).toEqual([{ from: null, to: 'queued', at: T0, detail: null }]);
    journal.close();
  });

  it('a journal written before jobs could be removed gains the column and keeps its jobs', () => {
    const db = oldJournal(dbPath(), false);
    const journal = createJobJournal({ db, now: () => T0 });
    expect(schemaVersion(db)).toBe(5);
    expect(journal.all().map((j) => j.id)).toEqual(['j1', 'j2']);
    journal.transition('j1', 'canceled');
    journal.remove('j1');
    expect(journal.all().map((j) => j.id)).toEqual(['j2']);
    expect(journal.transitions('j1').at(-1)).toMatchObject({ from: 'canceled', to: 'canceled', detail: 'removed' });
    journal.close();
  });

  it('a version 2 journal migrates to 5 with its jobs as they were; none is scheduled', () => {
    const db = oldJournal(dbPath(), true);
    db.exec('ALTER TABLE jobs ADD COLUMN generation_id TEXT');
    db.exec('ALTER TABLE jobs ADD COLUMN variation_of TEXT');
    db.exec(`UPDATE jobs SET generation_id = 'gen-1', idempotency_key = 'key-1', state = 'generating' WHERE id = 'j1'`);
    db.exec('PRAGMA user_version = 2');
    const journal = createJobJournal({ db, now: () => T0 });
    expect(schemaVersion(db)).toBe(5);
    expect(journal.all()).toEqual([
      expect.objectContaining({
        id: 'j1',
        state: 'generating',
        generationId: 'gen-1',
        idempotencyKey: 'key-1',
        submitAt: null,
      }),
    ]);
    expect(journal.update('j1', { submitAt: T0 + 5 }).submitAt).toBe(T0 + 5);
    journal.close();
  });

  it('a version 4 journal (one local frame) gains the end frame column: its jobs have none, new ones keep theirs', () => {
    const db = oldJournal(dbPath(), true);
    for (const column of ['generation_id TEXT', 'variation_of TEXT', 'route TEXT', 'submit_at INTEGER']) {
      db.exec(`ALTER TABLE jobs ADD COLUMN ${column}`);
    }
    db.exec(`UPDATE jobs SET start_frame = '/frames/start.png' WHERE id = 'j1'`);
    db.exec('PRAGMA user_version = 4');
    const journal = createJobJournal({ db, now: () => T0 });
    expect(schemaVersion(db)).toBe(5);
    expect(journal.get('j1')).toMatchObject({ startFrame: '/frames/start.png', endFrame: null });
    const [framed] = journal.create([
      { kind: 'video', request: { model: 'm', prompt: 'p' }, startFrame: '/s.png', endFrame: '/e.png' },
    ]);
    expect(journal.get(framed!.id)).toMatchObject({ startFrame: '/s.png', endFrame: '/e.png' });
    expect(journal.update(framed!.id, { endFrame: null }).endFrame).toBeNull();
    journal.close();
  });

  it('a journal written by a newer version is refused with a clear error, untouched', () => {
    const db = oldJournal(dbPath(), true);
    db.exec('PRAGMA user_version = 6');
    const before = schemaOf(db);
    expect(() => createJobJournal({ db, now: () => T0 })).toThrow(SchemaTooNewError);
    expect(() => createJobJournal({ db, now: () => T0 })).toThrow(
      /the job journal has schema version 6, newer than the 5 this program knows/,
    );
    expect(schemaOf(db)).toEqual(before);
    db.close();
  });
});

describe("a failed job's stored error", () => {
  it('written with the names of earlier releases reads back with the codes of one vocabulary', () => {
    const db = oldJournal(dbPath(), true);
    const stored: Array<[string, string]> = [
      ['authentication', 'authentication_error'],
      ['permission', 'permission_error'],
      ['rate_limit', 'rate_limit_exceeded'],
      ['invalid_request', 'invalid_request_error'],
      ['not_found', 'not_found_error'],
      ['server', 'internal_error'],
      ['network', 'network_error'],
      ['cancelled', 'canceled'],
      ['provider_unavailable', 'provider_unavailable'],
      ['timeout', 'timeout'],
      ['invalid_response', 'invalid_response'],
      ['interrupted', 'interrupted'],
    ];
    const put = db.prepare(
      `INSERT INTO jobs (id, kind, state, request, position, error, created_at, updated_at) VALUES (?, 'video', 'failed', '{}', 9, ?, ?, ?)`,
    );
    for (const [kind] of stored) put.run(`old-${kind}`, JSON.stringify({ kind, message: `it was ${kind}` }), T0, T0);
    put.run('new-one', JSON.stringify({ code: 'authentication_error', message: 'Invalid API key' }), T0, T0);
    const journal = createJobJournal({ db, now: () => T0 });
    for (const [kind, code] of stored) {
      expect(journal.get(`old-${kind}`)?.error).toEqual({ code, message: `it was ${kind}` });
    }
    expect(journal.get('new-one')?.error).toEqual({ code: 'authentication_error', message: 'Invalid API key' });
    journal.close();
  });

  it('is written with its code, and reads back unchanged', () => {
    const journal = createJobJournal({ db: openJournalDatabase(dbPath()), now: () => T0 });
    const [job] = journal.create([{ kind: 'image', request: { model: 'm', prompt: 'p' } }]);
    journal.transition(job!.id, 'generating');
    journal.transition(job!.id, 'failed', { error: { code: 'rate_limit_exceeded', message: 'slow down' } });
    const raw = journal.get(job!.id);
    expect(raw?.error).toEqual({ code: 'rate_limit_exceeded', message: 'slow down' });
    journal.close();
  });
});
