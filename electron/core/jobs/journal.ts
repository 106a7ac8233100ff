import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { MediaKind } from '../../../shared/api/index.ts';
import type { Migration } from '../../../shared/node/migrations.ts';
import { migrate } from '../../../shared/node/migrations.ts';
import { transaction } from '../../../shared/node/sqlite.ts';
import { readStoredJobError } from './stored-error.ts';
import { canTransition } from './state.ts';
import type { GenerationInput, Job, JobState, NewJob } from './state.ts';

export class JobTransitionError extends Error {
  /** `to`: the state asked for, or the event the job's state does not take (machine.ts). */
  constructor(job: Job, to: string) {
    super(`Job ${job.id} cannot go from ${job.state} to ${to}`);
    this.name = 'JobTransitionError';
  }
}

interface Row {
  id: string;
  kind: MediaKind;
  state: JobState;
  request: string;
  start_frame: string | null;
  end_frame: string | null;
  position: number;
  idempotency_key: string | null;
  submitted_at: number | null;
  attempts: number;
  not_before: number | null;
  error: string | null;
  result: string | null;
  downloads: string;
  batch_id: string | null;
  generation_id: string | null;
  variation_of: string | null;
  route: string | null;
  submit_at: number | null;
  created_at: number;
  updated_at: number;
}

const toJob = (r: Row): Job => ({
  id: r.id,
  kind: r.kind,
  state: r.state,
  request: JSON.parse(r.request) as GenerationInput,
  startFrame: r.start_frame,
  endFrame: r.end_frame ?? null,
  position: r.position,
  idempotencyKey: r.idempotency_key,
  submittedAt: r.submitted_at,
  attempts: r.attempts,
  notBefore: r.not_before,
  error: r.error === null ? null : readStoredJobError(r.error),
  result: r.result === null ? null : (JSON.parse(r.result) as Job['result']),
  downloads: JSON.parse(r.downloads) as string[],
  batchId: r.batch_id,
  generationId: r.generation_id,
  variationOf: r.variation_of,
  route: r.route === null ? null : (JSON.parse(r.route) as Job['route']),
  submitAt: r.submit_at ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type JobPatch = Partial<Omit<Job, 'id' | 'kind' | 'state' | 'createdAt' | 'updatedAt'>>;

export interface JobJournal {
  create(jobs: readonly NewJob[]): Job[];
  get(id: string): Job | null;
  /** Every job, queued ones in queue order first. */
  all(): Job[];
  /** Writes the new state (and the transition log line) and only then returns: act after this. */
  transition(id: string, to: JobState, patch?: JobPatch, detail?: string): Job;
  /** Changes that are not state transitions (queue order). */
  update(id: string, patch: JobPatch): Job;
  /**
   * Drops a finished job from the queue for good: it no longer appears in get/all (nor after a
   * restart). The row stays as a tombstone so its result items stay claimed (see claimedItemIds).
   */
  remove(id: string): void;
  /** Item ids every job but `exceptId` has a result for, removed jobs included. */
  claimedItemIds(exceptId: string): Set<string>;
  transitions(id: string): { from: JobState | null; to: JobState; at: number; detail: string | null }[];
  close(): void;
}

// Version 1 is the schema the journal shipped without a version; its IF NOT EXISTS clauses make
// it adopt such a database as it is.
const SCHEMA_V1 = `
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

/** The job journal's schema, step by step (shared/node/migrations.ts). Append only. */
const JOURNAL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    up: (db) => {
      db.exec(SCHEMA_V1);
      // removed_at came after the first release, added by a check on every open; journals written
      // before versioning may have it or not, so version 1 keeps that check.
      const columns = db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[];
      if (!columns.some((c) => c.name === 'removed_at')) db.exec('ALTER TABLE jobs ADD COLUMN removed_at INTEGER');
    },
  },
  {
    version: 2,
    // docs/workflows.md: the service's generation id, written as soon as a 202 brings it, so a restart
    // resumes polling instead of resubmitting; and the source of a variations job.
    name: 'generation id and variation source',
    up: (db) => {
      db.exec('ALTER TABLE jobs ADD COLUMN generation_id TEXT');
      db.exec('ALTER TABLE jobs ADD COLUMN variation_of TEXT');
    },
  },
  {
    version: 3,
    // docs/workflows.md: where routing sends the job and its price (JSON), so the queue row and the
    // budgets know them across restarts.
    name: 'route',
    up: (db) => {
      db.exec('ALTER TABLE jobs ADD COLUMN route TEXT');
    },
  },
  {
    version: 4,
    // docs/workflows.md: "Submit at…". An older journal gains the column empty: its jobs run as soon as they can.
    name: 'scheduled submit time',
    up: (db) => {
      db.exec('ALTER TABLE jobs ADD COLUMN submit_at INTEGER');
    },
  },
  {
    version: 5,
    // docs/workflows.md, "The end frame slot": a local end frame the queue uploads after the start
    // frame. An older journal gains the column empty: its jobs have no local end frame.
    name: 'end frame',
    up: (db) => {
      db.exec('ALTER TABLE jobs ADD COLUMN end_frame TEXT');
    },
  },
];

/**
 * The job journal in SQLite. Each transition is one transaction that updates the job and appends
 * to the log; `synchronous = FULL` so a committed transition survives even a power cut.
 */
export function createJobJournal({ db, now }: { db: DatabaseSync; now: () => number }): JobJournal {
  // FULL so that a committed transition survives a power cut (see above). Set outside the
  // migration: it belongs to the connection, not to the schema.
  db.exec('PRAGMA synchronous = FULL');
  migrate(db, 'the job journal', JOURNAL_MIGRATIONS);
  const cache = new Map<string, StatementSync>();
  const stmt = (sql: string): StatementSync => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const get = (id: string): Job | null => {
    const row = stmt('SELECT * FROM jobs WHERE id = ? AND removed_at IS NULL').get(id) as Row | undefined;
    return row ? toJob(row) : null;
  };
  const COLUMNS: Record<keyof JobPatch, [string, (v: unknown) => string | number | null]> = {
    request: ['request', (v) => JSON.stringify(v)],
    startFrame: ['start_frame', (v) => (v as string | null) ?? null],
    endFrame: ['end_frame', (v) => (v as string | null) ?? null],
    position: ['position', (v) => v as number],
    idempotencyKey: ['idempotency_key', (v) => (v as string | null) ?? null],
    submittedAt: ['submitted_at', (v) => (v as number | null) ?? null],
    attempts: ['attempts', (v) => v as number],
    notBefore: ['not_before', (v) => (v as number | null) ?? null],
    error: ['error', (v) => (v == null ? null : JSON.stringify(v))],
    result: ['result', (v) => (v == null ? null : JSON.stringify(v))],
    downloads: ['downloads', (v) => JSON.stringify(v ?? [])],
    batchId: ['batch_id', (v) => (v as string | null) ?? null],
    generationId: ['generation_id', (v) => (v as string | null) ?? null],
    variationOf: ['variation_of', (v) => (v as string | null) ?? null],
    route: ['route', (v) => (v == null ? null : JSON.stringify(v))],
    submitAt: ['submit_at', (v) => (v as number | null) ?? null],
  };
  function write(id: string, state: JobState | null, patch: JobPatch): void {
    const sets = ['updated_at = ?'];
    const values: (string | number | null)[] = [now()];
    if (state) {
      sets.push('state = ?');
      values.push(state);
    }
    for (const [key, value] of Object.entries(patch) as [keyof JobPatch, unknown][]) {
      const column = COLUMNS[key];
      if (!column) continue;
      sets.push(`${column[0]} = ?`);
      values.push(column[1](value));
    }
    stmt(`UPDATE jobs SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
  }

  return {
    create(jobs) {
      const at = now();
      const maxPos = (stmt('SELECT coalesce(max(position), 0) AS p FROM jobs').get() as { p: number }).p;
      const insert = stmt(
        `INSERT INTO jobs (id, kind, state, request, start_frame, end_frame, position, batch_id, variation_of, route, submit_at, created_at, updated_at)
         VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const log = stmt(
        'INSERT INTO job_transitions (job_id, from_state, to_state, at, detail) VALUES (?, NULL, ?, ?, NULL)',
      );
      const ids = jobs.map(() => randomUUID());
      transaction(db, () => {
        jobs.forEach((j, i) => {
          insert.run(
            ids[i]!,
            j.kind,
            JSON.stringify(j.request),
            j.startFrame ?? null,
            j.endFrame ?? null,
            maxPos + i + 1,
            j.batchId ?? null,
            j.variationOf ?? null,
            j.route ? JSON.stringify(j.route) : null,
            j.submitAt ?? null,
            at,
            at,
          );
          log.run(ids[i]!, 'queued', at);
        });
      });
      return ids.map((id) => get(id)!);
    },
    get,
    all() {
      return (
        stmt(
          "SELECT * FROM jobs WHERE removed_at IS NULL ORDER BY state != 'queued', position, created_at",
        ).all() as unknown as Row[]
      ).map(toJob);
    },
    transition(id, to, patch = {}, detail) {
      return transaction(db, () => {
        const job = get(id);
        if (!job) throw new Error(`No job ${id}`);
        if (!canTransition(job.state, to)) throw new JobTransitionError(job, to);
        write(id, to, patch);
        stmt('INSERT INTO job_transitions (job_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)').run(
          id,
          job.state,
          to,
          now(),
          detail ?? null,
        );
        return get(id)!;
      });
    },
    update(id, patch) {
      write(id, null, patch);
      const job = get(id);
      if (!job) throw new Error(`No job ${id}`);
      return job;
    },
    remove(id) {
      transaction(db, () => {
        const job = get(id);
        if (!job) throw new Error(`No job ${id}`);
        const at = now();
        stmt('UPDATE jobs SET removed_at = ?, updated_at = ? WHERE id = ?').run(at, at, id);
        stmt('INSERT INTO job_transitions (job_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)').run(
          id,
          job.state,
          job.state,
          at,
          'removed',
        );
      });
    },
    claimedItemIds(exceptId) {
      const rows = stmt('SELECT result FROM jobs WHERE id != ? AND result IS NOT NULL').all(exceptId) as {
        result: string;
      }[];
      return new Set(rows.flatMap((r) => (JSON.parse(r.result) as NonNullable<Job['result']>).items.map((i) => i.id)));
    },
    transitions(id) {
      return (
        stmt('SELECT from_state, to_state, at, detail FROM job_transitions WHERE job_id = ? ORDER BY seq').all(id) as {
          from_state: JobState | null;
          to_state: JobState;
          at: number;
          detail: string | null;
        }[]
      ).map((r) => ({ from: r.from_state, to: r.to_state, at: r.at, detail: r.detail }));
    },
    close() {
      db.close();
    },
  };
}
