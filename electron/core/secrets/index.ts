export { createSecretStore, NO_KEYCHAIN_ADVICE, SecretStoreUnavailableError } from './keychain.ts';
export { createKeyFile, KeyFileError } from './file-store.ts';
export type { KeyFile, KeyFileCheck, KeyFileOptions } from './file-store.ts';
export {
  keyStoreChoice,
  keyStoreChoiceText,
  KeyStoreChoiceError,
  KEY_FILE_NAME,
  KEY_STORE_CHOICE_FILE,
  rememberedKeyStore,
  secretStoreOptions,
} from './choice.ts';
export type { KeyStoreChoice, KeyStoreName } from './choice.ts';
export type {
  SecretBackend,
  SecretCipher,
  SecretInfo,
  SecretStore,
  SecretStoreOptions,
  SecretStoreStatus,
} from './keychain.ts';
