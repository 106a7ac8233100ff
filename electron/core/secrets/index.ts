export { createSecretStore, NO_KEYCHAIN_ADVICE, SecretStoreUnavailableError } from './keychain.ts';
export { createKeyFile, KeyFileError } from './file-store.ts';
export type { KeyFile, KeyFileOptions } from './file-store.ts';
export { keyStoreChoice, KeyStoreChoiceError, KEY_FILE_NAME, secretStoreOptions } from './choice.ts';
export type { KeyStoreChoice } from './choice.ts';
export type {
  SecretBackend,
  SecretCipher,
  SecretInfo,
  SecretStore,
  SecretStoreOptions,
  SecretStoreStatus,
} from './keychain.ts';
