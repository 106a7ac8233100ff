// The job queue with 1,000 queued jobs (enqueue, scheduling, draining through an instant service),
// and the journal's write cost per transition against a bare UPDATE of the same row.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerationResponse, Usage } from '../shared/api/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../electron/core/jobs/index.ts';
import type { GenerationService } from '../electron/core/jobs/index.ts';
import { reportFigure } from './support/report.ts';

const JOBS = 1_000;

const instant: GenerationService = {
  rateLimit: { remaining: null, reset: null },
  generateVideo: (input) => Promise.resolve(answer(input.prompt)),
  generateImage: (input) => Promise.resolve(answer(input.prompt)),
  listMedia: () => Promise.resolve({ total: 0, medias: [] }),
  getUsage: () => Promise.reject<Usage>(new Error('not used')),
};

function answer(prompt: string): GenerationResponse {
  return {
    success: true,
    price: 0,
    stats: { setupTime: 0, processingTime: 0, generationTime: 0, retries: 0, providerId: 'bench' },
    data: [
      {
        id: prompt,
        url: 'u',
        mime: 'image/png',
        user: 'u',
        media: 'image',
        model: 'clipdesk/still',
        provider: 'p',
        prompt,
        size: '256x256',
        duration: 0,
        createdAt: new Date().toISOString(),
      },
    ],
  };
}

export default async function (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-jobs-'));
  try {
    // Journal write cost: one transition (UPDATE + log line, FULL sync) vs a bare UPDATE of one column.
    const journal = createJobJournal({ db: openJournalDatabase(join(dir, 'journal.db')), now: () => Date.now() });
    const [one] = journal.create([{ kind: 'image', request: { model: 'clipdesk/still', prompt: 'x' } }]);
    const N = 400;
    let t = performance.now();
    for (let i = 0; i < N / 2; i++) {
      journal.transition(one!.id, 'canceled');
      journal.transition(one!.id, 'queued');
    }
    const perTransition = (performance.now() - t) / N;
    const bareDb = openJournalDatabase(join(dir, 'bare.db'));
    bareDb.exec(
      "PRAGMA synchronous = FULL; CREATE TABLE t (id TEXT PRIMARY KEY, state TEXT); INSERT INTO t VALUES ('a', 'queued')",
    );
    const update = bareDb.prepare('UPDATE t SET state = ? WHERE id = ?');
    t = performance.now();
    for (let i = 0; i < N; i++) update.run(i % 2 ? 'queued' : 'canceled', 'a');
    const perBare = (performance.now() - t) / N;
    reportFigure(
      'jobs-journal-transition',
      perTransition * 1000,
      'µs',
      perTransition / perBare,
      'a bare UPDATE of one row, same durability',
    );
    bareDb.close();

    // 1,000 queued jobs: enqueue them while paused, then drain at the pro image limit.
    const queue = createJobQueue({
      journal: createJobJournal({ db: openJournalDatabase(join(dir, 'queue.db')), now: () => Date.now() }),
      api: instant,
      limits: { video: 5, image: 20 },
    });
    await queue.start();
    queue.pause();
    t = performance.now();
    queue.enqueueBatch({ kind: 'image', request: { model: 'clipdesk/still', prompt: 'bench' } }, 100);
    for (let i = 100; i < JOBS; i++)
      queue.enqueue({ kind: 'image', request: { model: 'clipdesk/still', prompt: `bench ${i}` } });
    const enqueueMs = performance.now() - t;
    t = performance.now();
    const stats = queue.stats();
    const statsMs = performance.now() - t;
    if (stats.queued !== JOBS) throw new Error(`expected ${JOBS} queued, saw ${stats.queued}`);
    t = performance.now();
    queue.resume();
    await queue.idle();
    const drainMs = performance.now() - t;
    if (queue.list().some((j) => j.state !== 'done')) throw new Error('not every job finished');
    const transitions = JOBS * 2; // queued → generating → done
    reportFigure(
      'jobs-queue-enqueue-1000',
      enqueueMs,
      'ms',
      enqueueMs / JOBS / perTransition,
      'journal transitions, per job',
    );
    reportFigure('jobs-queue-stats-1000-queued', statsMs, 'ms', statsMs / 16, 'a 16 ms frame');
    reportFigure(
      'jobs-queue-drain-1000',
      (JOBS / drainMs) * 1000,
      'jobs/s',
      drainMs / transitions / perTransition,
      'journal transition cost per transition made',
    );
    await queue.dispose();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
