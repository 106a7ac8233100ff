import { describe, expect, it } from 'vitest';
import type { GeneratedItem } from '../../../../../shared/api/index.ts';
import type { ModelRecord } from '../../../../../shared/api/index.ts';
import { openJournalDatabase, type Job } from '../../../../../electron/core/jobs/index.ts';
import { budgetTerms, createLedger, jobChargeRecorder } from '../../../../../electron/core/ledger/index.ts';
import { coreJob } from '../../../../support/core-job.ts';

const T0 = Date.UTC(2026, 10, 23, 12);

const generated = (id: string, price?: number): GeneratedItem =>
  ({ id, price, createdAt: new Date(T0).toISOString() }) as GeneratedItem;

function setup(key: { last4: string | null }) {
  const ledger = createLedger({ db: openJournalDatabase(':memory:'), now: () => T0 });
  const recorder = jobChargeRecorder({ ledger, profileId: 'local', keyLast4: () => key.last4, now: () => T0 });
  return { ledger, recorder };
}

describe('what the ledger learns from the queue’s jobs', () => {
  it('charges the key that submitted the job, not the one held when the result arrives', () => {
    const key = { last4: 'aaaa' };
    const { ledger, recorder } = setup(key);
    recorder.noteSubmit(coreJob('j1', T0, { state: 'generating', submittedAt: T0, attempts: 1 }));
    key.last4 = 'bbbb';
    const result = { items: [generated('med_1', 0.05)], price: 0.05 };
    recorder.recordCharge(coreJob('j1', T0, { state: 'downloading', result }));
    expect(ledger.get('j1')).toMatchObject({ key: 'aaaa', price: 0.05, delivered: false, itemIds: ['med_1'] });
    recorder.recordCharge(coreJob('j1', T0, { state: 'done', result, downloads: ['/a.mp4'] }));
    expect(ledger.get('j1')).toMatchObject({ key: 'aaaa', delivered: true, day: '2026-11-23' });
  });

  it('notes no submit without a key or before the job generates; a job without a price is charged its items’', () => {
    const { ledger, recorder } = setup({ last4: null });
    recorder.noteSubmit(coreJob('j2', T0, { state: 'generating', submittedAt: T0 }));
    expect(ledger.submitKey('j2')).toBeNull();
    recorder.recordCharge(coreJob('j3', T0, { state: 'done' }));
    expect(ledger.get('j3')).toBeNull();
    const items = [generated('m1', 0.01), generated('m2', 0.02)];
    recorder.recordCharge(coreJob('j4', T0, { state: 'done', result: { items, price: null } }));
    expect(ledger.get('j4')?.price).toBeCloseTo(0.03);
  });
});

describe('budget terms', () => {
  const models = [
    {
      id: 'clipdesk/motion',
      base: 'clipdesk',
      slug: 'motion',
      media: 'video',
      parameters: { duration: { min: 1, max: 8, default: 4 } },
      providers: [{ id: 'local-swift', slug: 'swift', price: 0.01, features: [] }],
    },
  ] as unknown as ModelRecord[];
  const job = (id: string, over: Partial<Job> = {}) =>
    coreJob(id, T0, { request: { model: 'clipdesk/motion', prompt: id, duration: 2 }, ...over });

  it('prices a job at its previewed price, else the catalog’s estimate', () => {
    const terms = budgetTerms();
    expect(terms.priceOf(job('a'))).toBeNull();
    terms.setModels(models);
    expect(terms.priceOf(job('a'))).toBe(0.02);
    const route = { routing: 'optimal' as const, providerId: 'p', providerName: null, price: 0.5, dropped: [] };
    expect(terms.priceOf(job('b', { route }))).toBe(0.5);
  });

  it('an exemption lasts until the job ends', () => {
    const terms = budgetTerms();
    terms.exempt('a');
    terms.jobChanged(job('a', { state: 'generating' }));
    expect(terms.isExempt('a')).toBe(true);
    terms.jobChanged(job('a', { state: 'failed' }));
    expect(terms.isExempt('a')).toBe(false);
  });
});
