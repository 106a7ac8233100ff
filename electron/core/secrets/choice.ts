import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyFileOptions } from './file-store.ts';
import type { SecretCipher, SecretStoreOptions } from './keychain.ts';
import { CoreError } from '../errors.ts';

/** The key file's name in the user data folder. */
export const KEY_FILE_NAME = 'keys.json';

/** Where the last explicit choice of key store is remembered, in the user data folder. */
export const KEY_STORE_CHOICE_FILE = 'key-store.json';

export type KeyStoreName = 'keychain' | 'file';

export interface KeyStoreChoice {
  store: KeyStoreName;
  /** Set when `store` is 'file'. */
  keyFile?: KeyFileOptions;
  /**
   * Who chose it: the flag, the variable, an earlier explicit choice remembered for this data
   * folder, or nobody (the OS keychain by default).
   */
  source: 'flag' | 'env' | 'remembered' | 'default';
}

/**
 * Where keys go: the key store the user chose with `--key-store` or CLIPDESK_KEY_STORE (a flag
 * wins over the variable), else the one they last chose for this data folder, else the OS
 * keychain. An explicit choice is remembered in the data folder, so the app, the CLI and
 * `clipdesk mcp` keep using the key file once it was chosen, until `--key-store keychain`
 * (docs/security.md, "Keys without an OS keychain"). The passphrase comes only from
 * CLIPDESK_KEY_PASSPHRASE: never argv, which other users can read in the process list.
 */
export function keyStoreChoice(input: {
  flag?: string | undefined;
  env: NodeJS.ProcessEnv;
  userDataDir: string;
}): KeyStoreChoice {
  const explicit = input.flag ?? input.env['CLIPDESK_KEY_STORE'];
  let store: KeyStoreName;
  let source: KeyStoreChoice['source'];
  if (explicit !== undefined && explicit.trim() !== '') {
    store = parseStoreName(explicit);
    source = input.flag === undefined ? 'env' : 'flag';
    if (rememberedKeyStore(input.userDataDir) !== store) rememberKeyStore(input.userDataDir, store);
  } else {
    const remembered = rememberedKeyStore(input.userDataDir);
    store = remembered ?? 'keychain';
    source = remembered === null ? 'default' : 'remembered';
  }
  if (store === 'keychain') return { store, source };
  const passphrase = input.env['CLIPDESK_KEY_PASSPHRASE'];
  return {
    store,
    source,
    keyFile: { file: join(input.userDataDir, KEY_FILE_NAME), passphrase: passphrase === undefined ? null : passphrase },
  };
}

function parseStoreName(text: string): KeyStoreName {
  const named = text.trim().toLowerCase();
  if (named === 'keychain' || named === 'file') return named;
  throw new KeyStoreChoiceError(`--key-store (CLIPDESK_KEY_STORE) is keychain or file, not '${named}'`);
}

/** The key store last chosen for this data folder, or null when none was (or the record is unreadable). */
export function rememberedKeyStore(userDataDir: string): KeyStoreName | null {
  try {
    const parsed = JSON.parse(readFileSync(join(userDataDir, KEY_STORE_CHOICE_FILE), 'utf8')) as { store?: unknown };
    return parsed.store === 'file' || parsed.store === 'keychain' ? parsed.store : null;
  } catch {
    return null;
  }
}

/**
 * Records the choice (written aside and renamed, so a reader never sees half a file). A data
 * folder that cannot be written keeps the choice for this run only: the run itself must not fail
 * for it, and `clipdesk doctor` shows where the choice came from.
 */
function rememberKeyStore(userDataDir: string, store: KeyStoreName): void {
  const file = join(userDataDir, KEY_STORE_CHOICE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(userDataDir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, `${JSON.stringify({ store })}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Not writable: see above.
  }
}

/** How a choice came about, in the user's words (doctor). */
export function keyStoreChoiceText(choice: KeyStoreChoice): string {
  const name = choice.store === 'file' ? 'the key file' : 'the OS keychain';
  switch (choice.source) {
    case 'flag':
      return `${name}, chosen with --key-store ${choice.store} (remembered for this data folder)`;
    case 'env':
      return `${name}, chosen with CLIPDESK_KEY_STORE=${choice.store} (remembered for this data folder)`;
    case 'remembered':
      return (
        `${name}, as chosen before for this data folder` +
        (choice.store === 'file' ? ' (--key-store keychain goes back to the OS keychain)' : '')
      );
    case 'default':
      return `${name} (the default; --key-store file keeps keys in a key file)`;
  }
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
