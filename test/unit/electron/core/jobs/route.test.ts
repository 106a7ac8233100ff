import { describe, expect, it } from 'vitest';
import type { GenerationResponse } from '../../../../../shared/api/index.ts';
import { routeFromResponse } from '../../../../../electron/core/jobs/state.ts';

const response = (providerId: string, providerSlug: string): GenerationResponse => ({
  success: true,
  data: [],
  price: 0.092,
  stats: { setupTime: 0, processingTime: 0, generationTime: 0, retries: 1, providerId, providerSlug },
});

describe("a job's route from the generation's response", () => {
  it('keeps the preview’s display name for the provider it named', () => {
    const before = {
      routing: 'optimal' as const,
      providerId: 'local-prism',
      providerName: 'Local Prism (procedural)',
      price: 0.092,
      dropped: [],
    };
    expect(routeFromResponse(before, response('local-prism', 'prism')).providerName).toBe('Local Prism (procedural)');
  });

  it('never takes the slug for a display name (a fallback, or variations without a preview): the screens name it from the providers list', () => {
    const before = {
      routing: 'optimal' as const,
      providerId: 'local-swift',
      providerName: 'Local Swift (procedural)',
      price: 0.04,
      dropped: [],
    };
    expect(routeFromResponse(before, response('local-prism', 'prism'))).toMatchObject({
      providerId: 'local-prism',
      providerName: null,
      price: 0.092,
    });
    expect(routeFromResponse(null, response('local-prism', 'prism')).providerName).toBeNull();
  });
});
