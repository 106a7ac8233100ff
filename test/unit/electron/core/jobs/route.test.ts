import { describe, expect, it } from 'vitest';
import type { GenerationResponse } from '../../../../../shared/api/index.ts';
import { routeFromResponse } from '../../../../../electron/core/jobs/state.ts';

const response = (providerId: string, providerSlug: string): GenerationResponse => ({
  success: true,
  data: [],
  price: 0.092,
  stats: { setupTime: 0, processingTime: 0, generationTime: 0, retries: 1, providerId, providerSlug },
});

/** The route the routing preview gave at submit. */
const previewed = (providerId: string, providerName: string) => ({
  routing: 'optimal' as const,
  providerId,
  providerName,
  price: 0.092,
  dropped: [],
});

describe("a job's route from the generation's response", () => {
  it('keeps the preview’s display name for the provider it named', () => {
    const before = previewed('local-prism', 'Local Prism (procedural)');
    expect(routeFromResponse(before, response('local-prism', 'prism')).providerName).toBe('Local Prism (procedural)');
  });

  it('never takes the slug for a display name (a fallback, or variations without a preview): the screens name it from the providers list', () => {
    // The preview named Local Swift; the response says Local Prism served it (a fallback).
    const before = previewed('local-swift', 'Local Swift (procedural)');
    expect(routeFromResponse(before, response('local-prism', 'prism'))).toMatchObject({
      providerId: 'local-prism',
      providerName: null,
      price: 0.092,
    });
    expect(routeFromResponse(null, response('local-prism', 'prism')).providerName).toBeNull();
  });
});

describe('the job states and a route, defined once', () => {
  it('the core reads the contract’s list of states and route schema, not a copy', async () => {
    const core = await import('../../../../../electron/core/jobs/state.ts');
    const contract = await import('../../../../../shared/ipc/schemas/jobs.ts');
    expect(core.JOB_STATES).toBe(contract.JOB_STATES);
    // A route the core makes is one the contract's Job schema accepts as it is.
    const made = core.routeFromResponse(previewed('p1', 'One'), response('p1', 'one'));
    expect(contract.Job.shape.route.parse(made)).toEqual(made);
  });
});
