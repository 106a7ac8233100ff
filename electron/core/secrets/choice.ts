import { join } from 'node:path';
import type { KeyFileOptions } from './file-store.ts';
import type { SecretCipher, SecretStoreOptions } from './keychain.ts';
import { CoreError } from '../errors.ts';

/** The key file's name in the user data folder. */
export const KEY_FILE_NAME = 'keys.json';

export interface KeyStoreChoice {
  store: 'keychain' | 'file';
  /** Set when `store` is 'file'. */
  keyFile?: KeyFileOptions;
}

/**
 * Where keys go: the OS keychain unless the user chose the key file, with `--key-store file` or
 * CLIPDESK_KEY_STORE=file (a flag wins over the variable). The passphrase comes only from
 * CLIPDESK_KEY_PASSPHRASE: never argv, which other users can read in the process list.
 */
export function keyStoreChoice(input: {
  flag?: string | undefined;
  env: NodeJS.ProcessEnv;
  userDataDir: string;
}): KeyStoreChoice {
  const named = (input.flag ?? input.env['CLIPDESK_KEY_STORE'] ?? 'keychain').trim().toLowerCase();
  if (named === 'keychain' || named === '') return { store: 'keychain' };
  if (named !== 'file')
    throw new KeyStoreChoiceError(`--key-store (CLIPDESK_KEY_STORE) is keychain or file, not '${named}'`);
  const passphrase = input.env['CLIPDESK_KEY_PASSPHRASE'];
  return {
    store: 'file',
    keyFile: { file: join(input.userDataDir, KEY_FILE_NAME), passphrase: passphrase === undefined ? null : passphrase },
  };
}

/** A key store that is not one: the CLI answers it as a usage error (exit 2). */
export class KeyStoreChoiceError extends CoreError {
  declare readonly code: 'invalid_input';
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'KeyStoreChoiceError';
  }
}

/** The SecretStore options of a choice: the key file, or the OS keychain (with its fallback cipher, if any). */
export function secretStoreOptions(choice: KeyStoreChoice, fallback?: SecretCipher | null): SecretStoreOptions {
  if (choice.keyFile) return { keyFile: choice.keyFile };
  return fallback ? { fallback } : {};
}
