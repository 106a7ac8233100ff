import type { CatalogSyncReport } from '../../shared/api/catalog-sync.ts';

/** A sync where fal was read and Replicate could not be reached, so its part of the last catalog stayed. */
export const PARTIAL_SYNC_REPORT: CatalogSyncReport = {
  at: '2026-11-27T19:00:00.000Z',
  written: true,
  keptLast: true,
  providers: [
    { provider: 'fal', ok: true, models: 112, prices: 98 },
    { provider: 'replicate', ok: false, models: 0, prices: 0, error: 'Replicate could not be reached' },
  ],
  models: { video: 90, image: 31 },
};
