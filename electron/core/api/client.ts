/**
 * The service's API client (docs/architecture.md): one object over the transport (transport.ts),
 * its calls split by resource — generations, media and uploads, the catalog, the account.
 */
import type { Usage } from '../../../shared/api/index.ts';
import { accountCalls } from './account-calls.ts';
import { catalogCalls } from './catalog-calls.ts';
import type { ApiClient, ApiClientOptions, ApiClientState } from './client-types.ts';
import { generationCalls } from './generation-calls.ts';
import { mediaCalls } from './media-calls.ts';
import { createTransport, fetchRaw } from './transport.ts';

export function createApiClient(options: ApiClientOptions): ApiClient {
  const t = createTransport(options);
  let tier: string | null = null;
  let retentionDays: number | null = null;
  const listeners = new Set<(state: ApiClientState) => void>();
  const emit = (): void => {
    const state = { rateLimit: t.rate.current, tier };
    for (const listener of listeners) listener(state);
  };
  t.rate.subscribe(emit);
  const seenUsage = (usage: Usage): void => {
    retentionDays = usage.limits?.retentionDays ?? null;
    const seenTier = usage.tier ?? null;
    if (seenTier !== tier) {
      tier = seenTier;
      emit();
    }
  };
  return {
    baseUrl: t.baseUrl,
    origin: t.origin,
    get rateLimit() {
      return t.rate.current;
    },
    get tier() {
      return tier;
    },
    get retentionDays() {
      return retentionDays;
    },
    ...mediaCalls(t),
    ...generationCalls(t),
    ...catalogCalls(t),
    ...accountCalls(t, seenUsage),
    fetch: (url, opts) => fetchRaw(t, url, opts),
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      listeners.clear();
      if (t.ownDispatcher) await t.dispatcher.close();
    },
  };
}
