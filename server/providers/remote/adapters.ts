import type { ProviderAdapter, RemoteProviderId } from './contract.ts';
import { falAdapter } from './fal.ts';
import { googleAdapter } from './google.ts';
import { lumaAdapter } from './luma.ts';
import { openaiAdapter } from './openai.ts';
import { replicateAdapter } from './replicate.ts';
import { runwayAdapter } from './runway.ts';

/**
 * The remote providers this build can reach, one adapter module each. A provider without an
 * adapter here is not listed and never routed to; adding one is its module plus catalog entries.
 */
export const ADAPTERS: Partial<Record<RemoteProviderId, ProviderAdapter>> = {
  fal: falAdapter,
  replicate: replicateAdapter,
  google: googleAdapter,
  runway: runwayAdapter,
  luma: lumaAdapter,
  openai: openaiAdapter,
};
