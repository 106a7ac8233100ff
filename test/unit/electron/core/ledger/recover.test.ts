import { describe, expect, it } from 'vitest';
import type { MediaItem } from '../../../../../shared/api/index.ts';
import { openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import type { Job, JobResult } from '../../../../../electron/core/jobs/index.ts';
import { createLedger, RecoverError, recoverJob } from '../../../../../electron/core/ledger/index.ts';
import { coreJob } from '../../../../support/core-job.ts';

const T = Date.UTC(2026, 10, 23, 12);
const item = (id: string, prompt: string, at: number, price = 0.02): MediaItem => ({
  id,
  url: `http://svc/${id}`,
  mime: 'video/mp4',
  user: 'me',
  media: 'video',
  model: 'clipdesk/motion',
  modelSlug: 'clipdesk/motion:1',
  provider: 'local-studio',
  providerName: 'Local Studio',
  prompt,
  size: '360p',
  duration: 2,
  createdAt: new Date(at).toISOString(),
  price,
});
function job(id: string, over: Partial<Job> = {}): Job {
  return coreJob(id, T, {
    state: 'canceled',
    request: { model: 'clipdesk/motion', prompt: 'a boat' },
    submittedAt: T,
    attempts: 1,
    ...over,
  });
}

function deps(jobs: Job[], medias: MediaItem[]) {
  const ledger = createLedger({ db: openJournalDatabase(':memory:'), now: () => T });
  const retried: Array<{ id: string; result?: JobResult }> = [];
  const saved: string[] = [];
  return {
    retried,
    saved,
    ledger,
    d: {
      profileId: 'p',
      ledger,
      queue: {
        get: (id: string) => jobs.find((j) => j.id === id) ?? null,
        list: () => jobs,
        retry: (id: string, result?: JobResult) => {
          retried.push({ id, ...(result ? { result } : {}) });
          return jobs.find((j) => j.id === id) ?? null;
        },
      },
      api: {
        listMedia: () => Promise.resolve({ total: medias.length, medias }),
        getMedia: (id: string) => Promise.resolve(medias.find((m) => m.id === id)!),
      },
      downloads: { download: ({ item: m }: { item: MediaItem }) => Promise.resolve({ path: `/dl/${m.id}.mp4` }) },
      library: { upsert: () => undefined, markDownloaded: (id: string) => saved.push(id) },
    },
  };
}

describe('recover', () => {
  it('gives a job without a result the unclaimed item made after its submit, at the item’s price', async () => {
    const claimedBy = job('other', {
      state: 'done',
      result: { items: [item('med_claimed', 'a boat', T + 10)], price: 0.02 },
    });
    const medias = [
      item('med_before', 'a boat', T - 60_000),
      item('med_claimed', 'a boat', T + 10),
      item('med_other_prompt', 'a car', T + 20),
      item('med_mine', 'a boat', T + 30, 0.046),
    ];
    const { d, retried } = deps([job('lost'), claimedBy], medias);
    await recoverJob(d, 'lost');
    expect(retried).toHaveLength(1);
    expect(retried[0]!.result?.items.map((i) => i.id)).toEqual(['med_mine']);
    expect(retried[0]!.result).toMatchObject({ price: 0.046, recoveredBy: 'library' });
  });

  it('retries a job that has its items (it only downloads them) and refuses when nothing is found', async () => {
    const withResult = job('dl', { state: 'failed', result: { items: [item('med_dl', 'a boat', T)], price: 0.02 } });
    const { d, retried } = deps([withResult, job('nothing')], []);
    await recoverJob(d, 'dl');
    expect(retried).toEqual([{ id: 'dl' }]);
    await expect(recoverJob(d, 'nothing')).rejects.toBeInstanceOf(RecoverError);
  });

  it('downloads a removed job’s charged items by id and marks the charge delivered', async () => {
    const { d, saved, ledger } = deps([], [item('med_a', 'a boat', T), item('med_b', 'a boat', T)]);
    ledger.record({
      jobId: 'gone',
      profileId: 'p',
      key: 'ab12',
      day: '2026-11-23',
      itemIds: ['med_a', 'med_b'],
      price: 0.04,
    });
    await recoverJob(d, 'gone');
    expect(saved).toEqual(['med_a', 'med_b']);
    expect(ledger.get('gone')?.delivered).toBe(true);
  });
});
