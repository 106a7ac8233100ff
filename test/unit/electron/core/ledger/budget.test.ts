import { describe, expect, it } from 'vitest';
import type { ModelRecord } from '../../../../../shared/api/index.ts';
import type { Job } from '../../../../../electron/core/jobs/index.ts';
import { openJournalDatabase, selectJobsToStartWithHolds } from '../../../../../electron/core/jobs/index.ts';
import { budgetHold, budgetHoldFor, catalogEstimate, createLedger } from '../../../../../electron/core/ledger/index.ts';
import { coreJob } from '../../../../support/core-job.ts';

const T0 = Date.UTC(2026, 10, 23, 12);

function job(id: string, over: Partial<Job> = {}): Job {
  return coreJob(id, T0, { request: { model: 'clipdesk/motion', prompt: id, duration: 2 }, ...over });
}

describe('budgets', () => {
  const none = { today: 0, month: 0 };
  it('lets a job bring the day exactly to its cap, and holds one a cent over it', () => {
    expect(budgetHold(0.05, { today: 0.05, month: 0.05 }, { daily: 0.1, monthly: null })).toBeNull();
    // Float sums must not make "exactly" look like "over": 0.1 + 0.2 is 0.30000000000000004.
    expect(budgetHold(0.2, { today: 0.1, month: 0.1 }, { daily: 0.3, monthly: null })).toBeNull();
    expect(budgetHold(0.06, { today: 0.05, month: 0.05 }, { daily: 0.1, monthly: null })).toEqual({
      reason: 'budget',
      message: "Over today's budget ($0.110 of $0.100)",
      until: null,
    });
  });

  it('checks the month too, and names the day first when both are passed', () => {
    expect(budgetHold(1, { today: 0, month: 9.5 }, { daily: 5, monthly: 10 })?.message).toBe(
      "Over this month's budget ($10.50 of $10.00)",
    );
    expect(budgetHold(1, { today: 0, month: 9 }, { daily: 5, monthly: 10 })).toBeNull();
    expect(budgetHold(6, { today: 0, month: 9.5 }, { daily: 5, monthly: 10 })?.message).toMatch(/^Over today's/);
  });

  it('holds nothing without a cap or a price', () => {
    expect(budgetHold(100, none, { daily: null, monthly: null })).toBeNull();
    expect(budgetHold(null, none, { daily: 0.01, monthly: 0.01 })).toBeNull();
  });

  it('estimates from the catalog: the pinned offer, else the cheapest, × seconds × n', () => {
    const models = [
      {
        id: 'clipdesk/motion',
        base: 'clipdesk',
        slug: 'motion',
        media: 'video',
        parameters: { duration: { min: 1, max: 8, default: 4 } },
        providers: [
          { id: 'local-studio', slug: 'studio', price: 0.02, features: [] },
          { id: 'local-swift', slug: 'swift', price: 0.01, features: [] },
        ],
      },
    ] as unknown as ModelRecord[];
    expect(catalogEstimate(models, 'video', { model: 'clipdesk/motion:1.1', prompt: 'x', duration: 2 })).toBe(0.02);
    expect(catalogEstimate(models, 'video', { model: 'clipdesk/motion', prompt: 'x' })).toBe(0.04);
    expect(
      catalogEstimate(models, 'video', {
        model: 'clipdesk/motion',
        prompt: 'x',
        duration: 2,
        provider: 'studio',
        n: 3,
      }),
    ).toBe(0.12);
    expect(catalogEstimate(models, 'video', { model: 'other/model', prompt: 'x' })).toBeNull();
  });

  it("estimates by the offers' price tables as the service charges: size, sound, per video, per megapixel", () => {
    const models = [
      {
        id: 'google/veo-3',
        base: 'google',
        slug: 'veo-3',
        name: 'Veo 3',
        media: 'video',
        parameters: {
          duration: { min: 8, max: 8, default: 8 },
          size: { values: ['1080p'], default: '1080p' },
          audio: { default: true },
        },
        providers: [
          {
            id: 'fal',
            slug: 'fal',
            price: 0.4,
            features: [],
            prices: [
              { unit: 'second', usd: 0.2, audio: false },
              { unit: 'second', usd: 0.4, audio: true },
            ],
          },
          { id: 'google', slug: 'google', price: 0.35, features: [] },
        ],
      },
      {
        id: 'luma/ray-2',
        base: 'luma',
        slug: 'ray-2',
        name: 'Ray 2',
        media: 'video',
        parameters: { duration: { min: 5, max: 9, default: 5 } },
        providers: [
          { id: 'luma', slug: 'luma', price: 0.142, features: [], prices: [{ unit: 'video', usd: 1.27, duration: 9 }] },
        ],
      },
      {
        id: 'bfl/flux-dev',
        base: 'bfl',
        slug: 'flux-dev',
        name: 'FLUX',
        media: 'image',
        parameters: {},
        providers: [
          { id: 'fal', slug: 'fal', price: 0.025, features: [], prices: [{ unit: 'megapixel', usd: 0.025 }] },
        ],
      },
      {
        id: 'kling/v2.1',
        base: 'kling',
        slug: 'v2.1',
        name: 'Kling',
        media: 'video',
        parameters: { duration: { min: 5, max: 10, default: 5 }, size: { values: ['720p'], default: '720p' } },
        providers: [
          {
            id: 'fal',
            slug: 'fal',
            price: 0.056,
            features: [],
            prices: [{ unit: 'video', usd: 0.28, duration: 5, extraSecondUsd: 0.056 }],
          },
        ],
      },
      {
        id: 'bfl/flux-schnell',
        base: 'bfl',
        slug: 'flux-schnell',
        name: 'FLUX schnell',
        media: 'image',
        parameters: {},
        providers: [
          {
            id: 'fal',
            slug: 'fal',
            price: 0.006,
            features: [],
            prices: [{ unit: 'megapixel', usd: 0.003, rounding: 'up' }],
          },
        ],
      },
    ] as unknown as ModelRecord[];
    // The budget reads the price model the service charges by: a base plus a rate, whole megapixels.
    expect(catalogEstimate(models, 'video', { model: 'kling/v2.1', prompt: 'x', duration: 10 })).toBe(0.56);
    expect(catalogEstimate(models, 'image', { model: 'bfl/flux-schnell', prompt: 'x', size: '512x512', n: 2 })).toBe(
      0.006,
    );
    // The model makes sound by default: the with-sound line, so Google's flat $0.35/s is cheaper.
    expect(catalogEstimate(models, 'video', { model: 'google/veo-3', prompt: 'x' })).toBe(2.8);
    // Silent: fal's $0.20/s line.
    expect(catalogEstimate(models, 'video', { model: 'google/veo-3', prompt: 'x', audio: false })).toBe(1.6);
    expect(catalogEstimate(models, 'video', { model: 'luma/ray-2', prompt: 'x', duration: 9 })).toBe(1.27);
    expect(catalogEstimate(models, 'image', { model: 'bfl/flux-dev', prompt: 'x', size: '2000x1000', n: 2 })).toBe(0.1);
  });

  it('prices a start frame the queue has not uploaded yet as image-to-video, as the preview does', () => {
    const models = [
      {
        id: 'kling/v2.1',
        base: 'kling',
        slug: 'v2.1',
        media: 'video',
        parameters: { duration: { min: 5, max: 10, default: 5 } },
        providers: [
          {
            id: 'fal',
            slug: 'fal',
            price: 0.05,
            features: [],
            prices: [
              { unit: 'second', usd: 0.05, startFrame: false },
              { unit: 'second', usd: 0.09, startFrame: true },
            ],
          },
        ],
      },
    ] as unknown as ModelRecord[];
    const request = { model: 'kling/v2.1', prompt: 'x', duration: 10 };
    expect(catalogEstimate(models, 'video', request)).toBe(0.5);
    expect(catalogEstimate(models, 'video', request, true)).toBe(0.9);
    expect(catalogEstimate(models, 'video', { ...request, image_url: 'https://media.example/a.png' })).toBe(0.9);
  });

  it('counts the ledger’s charges of the day and the jobs in flight, and never holds an exempt job', () => {
    const ledger = createLedger({ db: openJournalDatabase(':memory:'), now: () => T0 });
    ledger.record({ jobId: 'paid', profileId: 'p', key: null, day: '2026-11-23', itemIds: [], price: 0.05 });
    ledger.record({ jobId: 'yesterday', profileId: 'p', key: null, day: '2026-11-22', itemIds: [], price: 1 });
    const exempt = new Set<string>();
    const holdFor = budgetHoldFor({
      ledger,
      profileId: 'p',
      budget: () => ({ daily: 0.1, monthly: null }),
      priceOf: () => 0.02,
      exempt: (id) => exempt.has(id),
      now: () => T0,
    });
    const flying = [job('f1', { state: 'generating' }), job('f2', { state: 'uploading' })];
    // 0.05 charged + 0.04 in flight + 0.02 = 0.11 > 0.10.
    expect(holdFor(job('next'), flying)?.message).toBe("Over today's budget ($0.110 of $0.100)");
    // One in flight: exactly 0.10.
    expect(holdFor(job('next'), flying.slice(0, 1))).toBeNull();
    exempt.add('next');
    expect(holdFor(job('next'), flying)).toBeNull();
    // A job with its result only downloads: nothing more to pay.
    expect(holdFor(job('recovered', { result: { items: [], price: 0.02 } }), flying)).toBeNull();
  });

  it('picks startable jobs around held ones, each seeing those started before it', () => {
    const holdFor = (j: Job, inFlight: readonly Job[]) =>
      j.id === 'big' || inFlight.length >= 2 ? { reason: 'budget' as const, message: 'over', until: null } : null;
    const jobs = [job('big'), job('a', { kind: 'image' }), job('b', { kind: 'image' }), job('c', { kind: 'image' })];
    const picked = selectJobsToStartWithHolds(
      { now: T0, paused: false, jobs, limits: { video: 1, image: 5 }, rateLimit: null },
      holdFor,
    );
    expect(picked.start.map((j) => j.id)).toEqual(['a', 'b']);
    expect([...picked.holds.keys()].sort()).toEqual(['big', 'c']);
  });
});
