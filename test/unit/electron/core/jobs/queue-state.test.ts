import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueState } from '../../../../../electron/core/jobs/queue-state.ts';
import type { Job } from '../../../../../electron/core/jobs/state.ts';

const JOBS_DIR = join(import.meta.dirname, '../../../../../electron/core/jobs');

describe('the queue’s state has one owner', () => {
  it('no file of the queue but queue-state.ts assigns to the state or changes its maps and sets', () => {
    // `q` and `rt` are the names the queue's files give the state.
    const writes = /\b(?:q|rt)\.\w+\s*(?:=[^=]|\+\+|--)|\b(?:q|rt)\.\w+\.(?:set|delete|add|clear|push)\(/;
    const offenders = readdirSync(JOBS_DIR)
      .filter((f) => f.endsWith('.ts') && f !== 'queue-state.ts')
      .flatMap((f) =>
        readFileSync(join(JOBS_DIR, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
          .filter(({ line }) => writes.test(line)),
      );
    expect(offenders).toEqual([]);
  });

  it('a released slot feeds the kind’s average duration; a canceled one does not', () => {
    let now = 1_000;
    const state = new QueueState({
      journal: { all: () => [] } as never,
      api: {} as never,
      uploader: undefined,
      downloader: undefined,
      clock: { now: () => now },
      settings: {} as never,
      holdFor: undefined,
      limits: { video: 1, image: 1 },
      onEvent: undefined,
      pump: () => {},
      progress: () => ({}) as never,
      offline: () => ({}) as never,
    });
    const job = (id: string, state: Job['state']): Job => ({ id, kind: 'video', state }) as Job;
    state.slotTaken('a');
    state.slotTaken('b');
    now = 5_000;
    state.slotReleased(job('b', 'canceled'));
    expect(state.averageMs.video).toBeNull();
    state.slotReleased(job('a', 'downloading'));
    expect(state.averageMs.video).toBe(4_000);
    expect([...state.slotStartedAt.keys()]).toEqual([]);
  });
});
