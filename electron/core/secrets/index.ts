export { createSecretStore, SecretStoreUnavailableError } from './keychain.ts';
export type {
  SecretBackend,
  SecretCipher,
  SecretInfo,
  SecretStore,
  SecretStoreOptions,
  SecretStoreStatus,
} from './keychain.ts';
