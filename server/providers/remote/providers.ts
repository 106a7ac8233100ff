import type { ProviderOffer, RemoteProvider } from '../types.ts';
import type { ProviderAdapter, RemoteProviderId } from './contract.ts';
import { REMOTE_PROVIDER_IDS } from './contract.ts';

/**
 * The remote providers of this build: one per adapter, with its offers from the catalog. A
 * provider the catalog names but this build has no adapter for is left out (it could not be called).
 */
export function createRemoteProviders(
  offers: Readonly<Record<RemoteProviderId, ProviderOffer[]>>,
  adapters: Readonly<Partial<Record<RemoteProviderId, ProviderAdapter>>>,
): RemoteProvider[] {
  return REMOTE_PROVIDER_IDS.flatMap((id) => {
    const adapter = adapters[id];
    if (!adapter) return [];
    return [
      {
        kind: 'remote' as const,
        id,
        slug: id,
        name: adapter.name,
        description: adapter.description,
        offers: offers[id].map((o) => ({ ...o, features: [...o.features], sizes: [...o.sizes] })),
        adapter,
      },
    ];
  });
}
