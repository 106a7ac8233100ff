import { describe, expect, it } from 'vitest';
import type { Usage } from '../../../../../shared/api/index.ts';
import type { Job } from '../../../../../electron/core/jobs/index.ts';
import type { Charge } from '../../../../../electron/core/ledger/index.ts';
import { deliveredSince, reconcile } from '../../../../../electron/core/ledger/index.ts';
import { coreJob } from '../../../../support/core-job.ts';

const DAY = '2026-11-23';
const T = Date.parse(`${DAY}T12:00:00Z`);

function job(id: string, over: Partial<Job> = {}): Job {
  return coreJob(id, T, {
    state: 'done',
    request: { model: 'clipdesk/motion', prompt: `prompt ${id}` },
    submittedAt: T,
    attempts: 1,
    ...over,
  });
}
const charge = (jobId: string, price: number, delivered: boolean, key = 'ab12'): Charge => ({
  jobId,
  profileId: 'local',
  key,
  day: DAY,
  itemIds: [`med_${jobId}`],
  price,
  delivered,
  chargedAt: T,
});
function usage(
  byKey: Array<{ last4: string; cost: number; days: Array<{ day: string; cost: number; items: number }> }>,
) {
  return {
    tier: 'pro',
    limits: {},
    usage: {
      cost: {
        total: byKey.reduce((n, k) => n + k.cost, 0),
        byKey: byKey.map((k, i) => ({ keyId: `key_${i}`, name: 'k', requests: 1, ...k })),
      },
    },
  } as unknown as Usage;
}

describe('reconciliation', () => {
  it('totals what delivered jobs were charged and lists the charged jobs whose download failed', () => {
    const charges = [charge('a', 0.04, true), charge('b', 0.046, false), charge('c', 0.02, false)];
    const jobs = [job('a'), job('b', { state: 'failed' }), job('c', { state: 'downloading' })];
    const r = reconcile({
      charges,
      usage: usage([{ last4: 'ab12', cost: 0.106, days: [{ day: DAY, cost: 0.106, items: 3 }] }]),
      jobs,
      currentKey: 'ab12',
    });
    expect(r.total).toBe(0.04);
    expect(r.differences).toEqual([]);
    // c is still downloading: not a gap yet.
    expect(r.jobs).toEqual([
      {
        jobId: 'b',
        prompt: 'prompt b',
        state: 'failed',
        day: DAY,
        price: 0.046,
        itemIds: ['med_b'],
        reason: 'download',
      },
    ]);
    expect(r.notDelivered).toBe(0.046);
  });

  it('shows what /usage charged beyond the ledger on a day, with that day’s jobs the service’s records show charged', () => {
    const r = reconcile({
      charges: [charge('a', 0.04, true)],
      usage: usage([
        { last4: 'ab12', cost: 0.086, days: [{ day: DAY, cost: 0.086, items: 2 }] },
        { last4: 'cli9', cost: 0.5, days: [{ day: DAY, cost: 0.5, items: 9 }] },
      ]),
      jobs: [
        job('a'),
        job('x', { state: 'canceled' }),
        job('never-sent', { state: 'canceled', submittedAt: null }),
        job('other-day', { state: 'failed', submittedAt: T - 86_400_000 }),
      ],
      currentKey: 'ab12',
      found: new Map([
        ['x', { itemIds: ['med_x'], price: 0.046 }],
        ['other-day', { itemIds: ['med_o'], price: 0.5 }],
      ]),
    });
    expect(r.total).toBe(0.04);
    expect(r.differences).toEqual([
      { key: 'ab12', day: DAY, service: 0.086, ledger: 0.04, otherClients: 0, unexplained: 0 },
    ]);
    expect(r.jobs.map((j) => [j.jobId, j.reason, j.price, j.itemIds])).toEqual([['x', 'response', 0.046, ['med_x']]]);
    expect(r.notDelivered).toBe(0.046);
    // The CLI's key is not this app's: shown apart, never in the total.
    expect(r.otherKeys).toBe(0.5);
  });

  it('counts earlier keys of the app as its own (the Local engine makes one per run without a keychain)', () => {
    const r = reconcile({
      charges: [charge('a', 0.04, true, 'old1'), charge('b', 0.02, true, 'new2')],
      usage: usage([
        { last4: 'old1', cost: 0.04, days: [{ day: DAY, cost: 0.04, items: 1 }] },
        { last4: 'new2', cost: 0.02, days: [{ day: DAY, cost: 0.02, items: 1 }] },
      ]),
      jobs: [job('a'), job('b')],
      currentKey: 'new2',
    });
    expect(r).toMatchObject({ total: 0.06, notDelivered: 0, otherKeys: 0, differences: [], jobs: [], perDay: true });
  });

  it('never names a job as charged without the service’s record of it: a day’s gap alone is not “not delivered”', () => {
    const r = reconcile({
      charges: [charge('a', 0.04, true)],
      usage: usage([{ last4: 'ab12', cost: 0.12, days: [{ day: DAY, cost: 0.12, items: 2 }] }]),
      jobs: [job('a'), job('canceled', { state: 'canceled' })],
      currentKey: 'ab12',
    });
    expect(r.differences).toEqual([
      { key: 'ab12', day: DAY, service: 0.12, ledger: 0.04, otherClients: 0, unexplained: 0.08 },
    ]);
    expect(r.jobs).toEqual([]);
    expect(r.notDelivered).toBe(0);
  });

  it('reconciles what other clients of the same key made (the CLI): not blamed on this app', () => {
    // The app delivered `a`; the CLI, with the same key, made two videos the same day.
    const cli = [
      { id: 'med_cli1', createdAt: `${DAY}T13:00:00Z`, price: 0.046 },
      { id: 'med_cli2', createdAt: `${DAY}T13:05:00Z`, price: 0.046 },
      // Another day's item explains nothing of this day.
      { id: 'med_old', createdAt: '2026-11-22T10:00:00Z', price: 0.5 },
    ];
    const r = reconcile({
      charges: [charge('a', 0.04, true)],
      usage: usage([{ last4: 'ab12', cost: 0.132, days: [{ day: DAY, cost: 0.132, items: 3 }] }]),
      jobs: [job('a')],
      currentKey: 'ab12',
      othersItems: cli,
    });
    expect(r.notDelivered).toBe(0);
    expect(r.jobs).toEqual([]);
    expect(r.otherClients).toBe(0.092);
    expect(r.differences).toEqual([
      { key: 'ab12', day: DAY, service: 0.132, ledger: 0.04, otherClients: 0.092, unexplained: 0 },
    ]);
  });

  it('a job of this app the service finished stays “not delivered” beside other clients’ items', () => {
    const r = reconcile({
      charges: [charge('a', 0.04, true)],
      usage: usage([{ last4: 'ab12', cost: 0.132, days: [{ day: DAY, cost: 0.132, items: 3 }] }]),
      jobs: [job('a'), job('x', { state: 'canceled' })],
      currentKey: 'ab12',
      found: new Map([['x', { itemIds: ['med_x'], price: 0.046 }]]),
      othersItems: [{ id: 'med_cli1', createdAt: `${DAY}T13:00:00Z`, price: 0.046 }],
    });
    expect(r.jobs.map((j) => [j.jobId, j.reason])).toEqual([['x', 'response']]);
    expect(r.notDelivered).toBe(0.046);
    expect(r.otherClients).toBe(0.046);
    expect(r.differences[0]).toMatchObject({ otherClients: 0.046, unexplained: 0 });
  });

  it('reconciles over all the app’s keys when the key changed while a job ran: its charge is the submitting key’s', () => {
    // Run 1 (key old1) finished `a`, canceled `b` (not charged) and stopped with `c` generating;
    // run 2 (key new2) got c's result. The service charged c to old1, which submitted it.
    const jobs = [job('a'), job('b', { state: 'canceled' }), job('c')];
    const service = usage([
      { last4: 'old1', cost: 0.12, days: [{ day: DAY, cost: 0.12, items: 2 }] },
      { last4: 'new2', cost: 0, days: [] },
    ]);
    const clean = {
      total: 0.12,
      notDelivered: 0,
      differences: [],
      jobs: [],
      otherKeys: 0,
      otherClients: 0,
      perDay: true,
    };
    // A ledger written before submits were noted holds c under the key of the result's arrival:
    // compared per day over the app's keys, nothing is missing and the canceled job is not blamed.
    const before = [charge('a', 0.04, true, 'old1'), charge('c', 0.08, true, 'new2')];
    expect(reconcile({ charges: before, usage: service, jobs, currentKey: 'new2' })).toMatchObject(clean);
    // The submitting key noted: a key that only submitted (no charge of its own) is still the app's.
    const noted = [charge('a', 0.04, true, 'new2'), charge('c', 0.08, true, 'new2')];
    expect(
      reconcile({ charges: noted, usage: service, jobs, currentKey: 'new2', appKeys: ['old1', 'new2'] }),
    ).toMatchObject(clean);
  });

  it('without per-day figures from the service, still lists the ledger’s own gaps', () => {
    const old = {
      tier: 'pro',
      limits: {},
      usage: { cost: { total: 1, byKey: [{ keyId: 'k', name: 'k', cost: 1, requests: 1 }] } },
    };
    const r = reconcile({
      charges: [charge('b', 0.046, false)],
      usage: old,
      jobs: [job('b', { state: 'failed' })],
      currentKey: 'ab12',
    });
    expect(r).toMatchObject({ perDay: false, notDelivered: 0.046, differences: [], otherKeys: 0 });
  });
});

describe('charges delivered after all', () => {
  it('a charge whose items are all saved now is delivered; one with an item still missing is not', () => {
    const both = { ...charge('both', 0.04, false), itemIds: ['med_1', 'med_2'] };
    const half = { ...charge('half', 0.04, false), itemIds: ['med_3', 'med_4'] };
    const done = charge('done', 0.02, true);
    const saved = new Set(['med_1', 'med_2', 'med_3', `med_done`]);
    expect(deliveredSince([both, half, done], (id) => saved.has(id))).toEqual(['both']);
  });
});
