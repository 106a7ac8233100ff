import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GenerationPlan } from '../../../../shared/api/index.ts';
import { openDatabase } from '../../../../server/storage/db.ts';
import { getGeneration, insertGeneration, storedPlan } from '../../../../server/storage/generations.ts';
import { insertProviderJob, unfinishedProviderJobs } from '../../../../server/storage/provider-jobs.ts';
import type { ProviderJobTerms } from '../../../../server/storage/provider-jobs.ts';

const dir = mkdtempSync(join(tmpdir(), 'clipdesk-stored-plans-'));
const db = openDatabase(dir);
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const PLAN: GenerationPlan = {
  kind: 'video',
  model: 'luma/ray-2',
  version: '2025-01',
  prompt: 'a lighthouse in fog',
  size: '720p',
  width: 1280,
  height: 720,
  duration: 5,
  count: 1,
  seed: 77,
  public: false,
  routing: 'optimal',
  parameters: { aspect_ratio: '16:9' },
  pricedAudio: false,
  candidates: [{ provider: 'luma', ignoredParameters: [] }],
  ranking: [
    { provider: 'fal', ignoredParameters: ['seed'] },
    { provider: 'luma', ignoredParameters: [] },
  ],
};

const TERMS: ProviderJobTerms = {
  user: 'ann',
  keyId: 'key_a',
  ignoredParameters: [],
  unitPrice: 0.71,
  retentionMs: 86_400_000,
  retries: 1,
  setupTime: 0.25,
};

describe('plans as the rows keep them', () => {
  it('a generation reads back the plan it was stored with, unchanged; one stored without a plan has none', async () => {
    const base = { user_id: 'ann', key_id: 'key_a', operation: 'videos.generations' as const, webhook_url: null };
    await insertGeneration(db, { ...base, id: 'gen_planned', request: '{}', plan: PLAN, created_at: 1 });
    await insertGeneration(db, { ...base, id: 'gen_earlier', request: '{"model":"x"}', created_at: 2 });
    expect(storedPlan((await getGeneration(db, 'gen_planned'))!)).toEqual(PLAN);
    expect(storedPlan((await getGeneration(db, 'gen_earlier'))!)).toBeUndefined();
  });

  it('a provider job keeps its plan and terms; a row an earlier version wrote reads as a plan of its one provider', async () => {
    const job = { id: 'job_new', state: { poll: 'https://api.example/jobs/job_new' } };
    await insertProviderJob(db, { id: 'pj_new', providerId: 'luma', job, plan: PLAN, terms: TERMS, submittedAt: 10 });
    // The `plan` column as versions before the GenerationPlan wrote it: the terms and a copy of the plan's fields.
    const copied = {
      kind: 'video' as const,
      model: 'runway/gen-4',
      version: 'turbo',
      prompt: 'waves on basalt',
      size: '720p',
      width: 1280,
      height: 720,
      duration: 10,
      count: 1,
      public: true,
      routing: 'cheapest' as const,
    };
    const earlier = { ...TERMS, item: 2, ignoredParameters: ['style'], ...copied };
    await db.run(
      `INSERT INTO provider_jobs (id, provider_id, provider_job_id, job, plan, user_id, status, submitted_at, updated_at)
         VALUES ('pj_old', 'runway', 'task_9', '{"id":"task_9","state":{}}', ?, 'ann', 'running', 20, 20)`,
      JSON.stringify(earlier),
    );
    const [fresh, old] = await unfinishedProviderJobs(db);
    expect(fresh).toMatchObject({ id: 'pj_new', providerId: 'luma', job, plan: PLAN, terms: TERMS });
    expect(old?.terms).toEqual({ ...TERMS, item: 2, ignoredParameters: ['style'] });
    const candidate = { provider: 'runway', ignoredParameters: ['style'] };
    expect(old?.plan).toEqual({ ...copied, seed: 0, parameters: {}, candidates: [candidate], ranking: [candidate] });
  });
});
