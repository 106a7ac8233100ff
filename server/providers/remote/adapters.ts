import type { ProviderAdapter, RemoteProviderId } from './contract.ts';

/**
 * The remote providers this build can reach, one adapter module each (`fal.ts`, `replicate.ts`, …).
 * A provider without an adapter here is not listed and never routed to.
 *
 * Empty on this branch: the adapters are written on other branches, and the lead fills this in
 * at merge, e.g. `import { falAdapter } from './fal.ts';` and `fal: falAdapter,`.
 */
export const ADAPTERS: Partial<Record<RemoteProviderId, ProviderAdapter>> = {};
