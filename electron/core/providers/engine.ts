import type { RemoteProviderId } from '../../../server/providers/remote/contract.ts';
import type { ProviderKeyId } from '../../../shared/ipc/schemas/providers.ts';

/**
 * What the app needs of the embedded service to manage its AI providers: the names startService
 * and RunningService give them (issue 12). Written as our own small interface so the app depends
 * on the shape, not on the service module, and a test can hand in a plain object.
 */

/** The options startService takes for providers. */
export interface EngineProviderOptions {
  providerKeys?: Partial<Record<RemoteProviderId, string>>;
  providerBaseUrls?: Partial<Record<RemoteProviderId, string>>;
  disabledProviders?: RemoteProviderId[];
}

export interface EngineProviderStatus {
  id: string;
  name: string;
  description: string;
  configured: boolean;
  last4?: string;
  enabled: boolean;
  baseUrl?: string;
  health: {
    status: 'ok' | 'unhealthy';
    /** The contract's ProviderHealth has `{class, message, at}`; a bare class is read as well. */
    lastError?: string | { class: string; message?: string; at?: string };
    since?: string;
  };
  models: string[];
}

export type EngineKeyTest = { ok: true } | { ok: false; message: string };

/** The running service's provider controls; each change applies at once, without a restart. */
export interface EngineProviders {
  setProviderKey(id: RemoteProviderId, key: string | null): unknown;
  setProviderEnabled(id: RemoteProviderId, enabled: boolean): unknown;
  setProviderBaseUrl(id: RemoteProviderId, url: string | null): unknown;
  testProviderKey(id: RemoteProviderId): Promise<EngineKeyTest>;
  providerStatus(): EngineProviderStatus[];
}

const METHODS = [
  'setProviderKey',
  'setProviderEnabled',
  'setProviderBaseUrl',
  'testProviderKey',
  'providerStatus',
] as const satisfies readonly (keyof EngineProviders)[];

/** The service's provider controls, or null when this service has none (an older build). */
export function engineProviders(service: object): EngineProviders | null {
  const s = service as Record<string, unknown>;
  return METHODS.every((m) => typeof s[m] === 'function') ? (service as EngineProviders) : null;
}

// The app's list of provider ids (shared/ipc, which may not import the service) must be the
// service's: a provider added on one side only fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameIds: Same<ProviderKeyId, RemoteProviderId> = true;
void sameIds;
