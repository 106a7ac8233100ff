import type {
  ProviderKeyTest,
  ProviderStatus,
  RemoteProviderId,
  RunningService,
  StartServiceOptions,
} from '../../../server/index.ts';
import type { ProviderKeyId } from '../../../shared/ipc/schemas/providers.ts';

/**
 * What the app needs of the embedded service to manage its AI providers (docs/providers.md): the service's
 * own types, narrowed to the provider options and controls.
 */
export type EngineProviderOptions = Pick<
  StartServiceOptions,
  'providerKeys' | 'providerBaseUrls' | 'disabledProviders'
>;
export type EngineProviderStatus = ProviderStatus;
export type EngineKeyTest = ProviderKeyTest;
/** The running service's provider controls; each change applies at once, without a restart. */
export type EngineProviders = Pick<
  RunningService,
  'setProviderKey' | 'setProviderEnabled' | 'setProviderBaseUrl' | 'testProviderKey' | 'providerStatus'
>;

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
