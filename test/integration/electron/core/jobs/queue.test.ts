import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import type { Job, QueueEvent } from '../../../../../electron/core/jobs/index.ts';
import { startEngine, tinyImage, tinyVideo } from './engine.ts';
import type { TestEngine } from './engine.ts';

let engine: TestEngine;

beforeAll(async () => {
  engine = await startEngine();
});
afterAll(async () => {
  await engine.close();
});

function journalAt(path: string) {
  return createJobJournal({ db: openJournalDatabase(path), now: () => Date.now() });
}

describe('job queue against the Local engine', () => {
  it('never runs more video generations than the free tier allows, and finishes them all', async () => {
    const api = await engine.client('free-user', 'free');
    const events: QueueEvent[] = [];
    const queue = createJobQueue({
      journal: journalAt(join(engine.dir, 'free.db')),
      api,
      onEvent: (e) => events.push(e),
    });
    await queue.start();
    expect(queue.stats().limits).toEqual({ video: 1, image: 2 });
    const jobs = [0, 1, 2].map((i) => queue.enqueue({ kind: 'video', request: tinyVideo(`free tier clip ${i}`) }));
    await queue.idle();
    expect(jobs.map((j) => queue.get(j.id)?.state)).toEqual(['done', 'done', 'done']);
    expect(engine.service.stats.maxConcurrent('free-user', 'video')).toBe(1);
    const statsEvents = events.filter((e): e is Extract<QueueEvent, { type: 'stats' }> => e.type === 'stats');
    expect(Math.max(...statsEvents.map((e) => e.stats.running.video))).toBe(1);
    await queue.dispose();
  });

  it('runs images up to the basic tier limit in parallel but never above it', async () => {
    const api = await engine.client('basic-user', 'basic');
    const queue = createJobQueue({ journal: journalAt(join(engine.dir, 'basic.db')), api });
    await queue.start();
    const jobs = queue.enqueueBatch({ kind: 'image', request: tinyImage('a basic batch') }, 8);
    expect(new Set(jobs.map((j) => j.request.seed)).size).toBe(8);
    await queue.idle();
    expect(jobs.every((j) => queue.get(j.id)?.state === 'done')).toBe(true);
    const max = engine.service.stats.maxConcurrent('basic-user', 'image');
    expect(max).toBeLessThanOrEqual(5);
    expect(max).toBeGreaterThan(1);
    await queue.dispose();
  });

  it('downloads results and writes every transition to the journal first', async () => {
    const api = await engine.client('dl-user', 'pro');
    const journal = journalAt(join(engine.dir, 'dl.db'));
    const downloads = createDownloadManager({ api, dir: join(engine.dir, 'downloads') });
    const queue = createJobQueue({ journal, api, downloader: downloads });
    await queue.start();
    const job = queue.enqueue({ kind: 'image', request: tinyImage('save me') });
    await queue.idle();
    const done = queue.get(job.id)!;
    expect(done.state).toBe('done');
    expect(done.downloads).toHaveLength(1);
    expect(existsSync(done.downloads[0]!)).toBe(true);
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'downloading', 'done']);
    await queue.dispose();
    await downloads.dispose();
  });

  for (const idempotency of [true, false]) {
    it(`after kill -9 mid-generation and a restart there is exactly one item and the job is done (${idempotency ? 'Idempotency-Key resend' : 'found in /media'})`, async () => {
      const user = `crash-${idempotency}`;
      const api = await engine.client(user, 'pro');
      const { key } = await engine.service.createKey({ user, tier: 'pro' });
      const journalPath = join(engine.dir, `${user}.db`);
      const child = spawn(
        process.execPath,
        [join(import.meta.dirname, 'queue-child.ts'), journalPath, engine.service.url, key, String(idempotency)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const lines = createInterface({ input: child.stdout });
      const jobId = await new Promise<string>((resolve, reject) => {
        lines.on('line', (line) => {
          const [state, id] = line.split(' ');
          if (state === 'generating') resolve(id!);
        });
        child.once('exit', () => reject(new Error('child exited before generating')));
      });
      // The request is on its way to (or running in) the service; the process dies without a word.
      await new Promise((r) => setTimeout(r, 150));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      expect(engine.service.stats.running(user, 'video') + (await api.listMedia({ user: 'me' })).total).toBe(1);

      const journal = journalAt(journalPath);
      expect(journal.get(jobId)?.state).toBe('generating');
      const queue = createJobQueue({ journal, api, idempotency, reconcilePollMs: 200 });
      await queue.start();
      await queue.idle();
      const job: Job = queue.get(jobId)!;
      expect(job.state).toBe('done');
      // Killed after the service's 202, the journal holds the generation id and the restart follows
      // it; killed before, the job is reconciled by resending or by finding it in /media.
      expect(['generation', idempotency ? 'idempotency' : 'library']).toContain(job.result?.recoveredBy);
      const listed = await api.listMedia({ user: 'me' });
      expect(listed.total).toBe(1);
      expect(job.result?.items.map((i) => i.id)).toEqual([listed.medias[0]!.id]);
      // However it was found, the job carries what the service charged for it (docs/workflows.md; before,
      // a job found in /media had no price, so the finished jobs added up to less than /usage).
      expect(job.result?.price).toBe(listed.medias[0]!.price);
      expect(job.result?.price).toBeGreaterThan(0);
      expect(journal.transitions(jobId).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
      await queue.dispose();
    });
  }
});
