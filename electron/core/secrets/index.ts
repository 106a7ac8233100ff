export { createSecretStore, NO_KEYCHAIN_ADVICE, SecretStoreUnavailableError } from './keychain.ts';
export { createKeyFile } from './file-store.ts';
export { keyStoreChoice, keyStoreChoiceText, KeyStoreChoiceError, secretStoreOptions } from './choice.ts';
export type { KeyStoreChoice } from './choice.ts';
export type { SecretBackend, SecretCipher, SecretStore, SecretStoreStatus } from './keychain.ts';
