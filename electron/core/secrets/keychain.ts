import { AsyncEntry } from '@napi-rs/keyring';
import type { EntryOptions } from '@napi-rs/keyring';
import { readFile, rename, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createKeyFile, type KeyFileOptions } from './file-store.ts';
import { CoreError } from '../errors.ts';

/**
 * API keys in the OS keychain. Nothing else in the app holds a key: settings store only the
 * account name under which it is filed here.
 */
export type SecretBackend =
  'secret-service' | 'macos-keychain' | 'windows-credential-manager' | 'safe-storage' | 'file' | 'none';

export interface SecretStoreStatus {
  backend: SecretBackend;
  available: boolean;
  /**
   * One line for the UI / CLI: where keys go, or why they cannot be stored, in the user's terms
   * (never the native library's D-Bus or OS error text).
   */
  message: string;
  /** The native error behind an unavailable keychain, for `clipdesk doctor` and logs, not for the UI. */
  detail?: string;
}

/** What the UI may know about a stored key. */
export interface SecretInfo {
  hasKey: boolean;
  last4: string | null;
  backend: SecretBackend;
}

/**
 * Electron's safeStorage, injected by the shell when its backend is not `basic_text`
 * (electron/core never imports electron). Encrypted blobs are kept in `file`.
 */
export interface SecretCipher {
  /** e.g. 'gnome_libsecret', 'kwallet5', 'dpapi'. */
  backendName: string;
  encrypt(plain: string): Buffer;
  decrypt(data: Buffer): string;
  file: string;
}

export interface SecretStoreOptions {
  /** Keychain service name. */
  service?: string;
  platform?: NodeJS.Platform;
  fallback?: SecretCipher;
  /**
   * The user's explicit choice of the key file over the OS keychain (`--key-store file`,
   * CLIPDESK_KEY_STORE=file): used whether or not a keychain answers, like VS Code's
   * `--password-store=basic`.
   */
  keyFile?: KeyFileOptions;
}

export interface SecretStore {
  status(): Promise<SecretStoreStatus>;
  get(account: string): Promise<string | null>;
  /** Rejects with SecretStoreUnavailableError when no backend can keep it. */
  set(account: string, secret: string): Promise<void>;
  delete(account: string): Promise<boolean>;
  info(account: string): Promise<SecretInfo>;
}

/**
 * No secure store can keep the key. Its `code` is the IPC error code, so the app answers
 * `keychain_unavailable` (503) for it, as it does for any core error that names a code it knows.
 */
export class SecretStoreUnavailableError extends CoreError {
  declare readonly code: 'keychain_unavailable';
  constructor(message: string) {
    super('keychain_unavailable', message);
    this.name = 'SecretStoreUnavailableError';
  }
}

const PROBE_ACCOUNT = '__clipdesk_probe__';

function nativeBackend(platform: NodeJS.Platform): SecretBackend {
  if (platform === 'darwin') return 'macos-keychain';
  if (platform === 'win32') return 'windows-credential-manager';
  return 'secret-service';
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

export function createSecretStore(options: SecretStoreOptions = {}): SecretStore {
  if (options.keyFile) return createFileSecretStore(options.keyFile);
  const service = options.service ?? 'Clipdesk';
  const platform = options.platform ?? process.platform;
  // On Linux, @napi-rs/keyring silently falls back to the kernel keyring (in memory, gone at
  // logout) when no Secret Service answers. Pinning the store makes that case an error we report.
  const entryOptions: EntryOptions | undefined =
    platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined;
  const entry = (account: string): AsyncEntry => new AsyncEntry(service, account, entryOptions);
  let probed: Promise<SecretStoreStatus> | null = null;

  async function probeNative(): Promise<SecretStoreStatus> {
    const backend = nativeBackend(platform);
    try {
      await entry(PROBE_ACCOUNT).getPassword();
      return { backend, available: true, message: `API keys are stored in the ${describe(backend)}.` };
    } catch (error) {
      if (options.fallback) {
        return {
          backend: 'safe-storage',
          available: true,
          message: `API keys are encrypted with the app's safe storage (${options.fallback.backendName}); the OS keychain is not reachable.`,
          detail: firstLine(error),
        };
      }
      const reason =
        platform === 'linux'
          ? 'no Secret Service (GNOME Keyring or KWallet) is running in this session'
          : `the ${describe(backend)} is not reachable`;
      return {
        backend: 'none',
        available: false,
        message: `No OS keychain is available: ${reason}. ${NO_KEYCHAIN_ADVICE}`,
        detail:
          platform === 'linux' && !process.env['DBUS_SESSION_BUS_ADDRESS']
            ? `DBUS_SESSION_BUS_ADDRESS is not set; ${firstLine(error)}`
            : firstLine(error),
      };
    }
  }

  const status = (): Promise<SecretStoreStatus> => (probed ??= probeNative());

  async function readFallback(cipher: SecretCipher): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(cipher.file, 'utf8')) as Record<string, string>;
    } catch {
      return {};
    }
  }
  async function writeFallback(cipher: SecretCipher, blobs: Record<string, string>): Promise<void> {
    await mkdir(dirname(cipher.file), { recursive: true });
    const tmp = `${cipher.file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(blobs), { mode: 0o600 });
    await rename(tmp, cipher.file);
  }

  const store: SecretStore = {
    status,
    async get(account) {
      const s = await status();
      if (s.backend === 'none') return null;
      if (s.backend === 'safe-storage' && options.fallback) {
        const blob = (await readFallback(options.fallback))[account];
        return blob === undefined ? null : options.fallback.decrypt(Buffer.from(blob, 'base64'));
      }
      return (await entry(account).getPassword()) ?? null;
    },
    async set(account, secret) {
      const s = await status();
      if (s.backend === 'none') throw new SecretStoreUnavailableError(s.message);
      if (s.backend === 'safe-storage' && options.fallback) {
        const blobs = await readFallback(options.fallback);
        blobs[account] = options.fallback.encrypt(secret).toString('base64');
        await writeFallback(options.fallback, blobs);
        return;
      }
      try {
        await entry(account).setPassword(secret);
      } catch (error) {
        // e.g. a locked or vanished keyring after the probe: the key was not stored, which is
        // the same answer to the user as no keychain at all.
        throw new SecretStoreUnavailableError(
          `The ${describe(s.backend)} did not store the key (${nativeReason(error)}). Unlock it or try again.`,
        );
      }
    },
    async delete(account) {
      const s = await status();
      if (s.backend === 'none') return false;
      if (s.backend === 'safe-storage' && options.fallback) {
        const blobs = await readFallback(options.fallback);
        if (!(account in blobs)) return false;
        delete blobs[account];
        await writeFallback(options.fallback, blobs);
        return true;
      }
      return entry(account).deleteCredential();
    },
    async info(account) {
      const s = await status();
      const key = await store.get(account).catch(() => null);
      return { hasKey: key !== null, last4: key === null ? null : key.slice(-4), backend: s.backend };
    },
  };
  return store;
}

/**
 * What to do without a keychain; every way named here works as written (tested in
 * test/integration/cli/keys-without-keychain.test.ts).
 */
export const NO_KEYCHAIN_ADVICE =
  'Keys can be kept in a key file instead: set CLIPDESK_KEY_STORE=file or pass --key-store file ' +
  '(npm start -- --key-store file; clipdesk --key-store file …), with CLIPDESK_KEY_PASSPHRASE set to encrypt them. ' +
  "Or give keys through the environment: FAL_KEY and the other providers' variables for the built-in engine, " +
  'CLIPDESK_API_KEY for a remote service.';

/**
 * The key file as a SecretStore: the user's opt-in store, its protection stated in every status.
 * The status is read from the file each time it is asked, so a passphrase that does not open the
 * keys (or is missing for encrypted ones) is said where the keys are looked for, never shown as
 * "no key" (docs/security.md, "Keys without an OS keychain").
 */
function createFileSecretStore(options: KeyFileOptions): SecretStore {
  const file = createKeyFile(options);
  const status = async (): Promise<SecretStoreStatus> => {
    const found = await file.check();
    switch (found.state) {
      case 'encrypted':
        return {
          backend: 'file',
          available: true,
          message: `API keys are kept in ${file.file} (owner-only), encrypted with your passphrase (scrypt, AES-256-GCM).`,
        };
      case 'plain':
        return {
          backend: 'file',
          available: true,
          message:
            `Warning: API keys are kept in plain text in ${file.file} (owner-only; no passphrase was given). ` +
            'Anyone who can read that file can use them: set CLIPDESK_KEY_PASSPHRASE to encrypt them.',
        };
      default:
        return { backend: 'file', available: false, message: found.message };
    }
  };
  const store: SecretStore = {
    status,
    get: (account) => file.get(account),
    set: (account, secret) => file.set(account, secret),
    delete: (account) => file.delete(account),
    async info(account) {
      const key = await store.get(account).catch(() => null);
      return { hasKey: key !== null, last4: key === null ? null : key.slice(-4), backend: 'file' };
    },
  };
  return store;
}

/** A short, user-facing reason for a native failure, without the library's raw text. */
function nativeReason(error: unknown): string {
  const text = firstLine(error).toLowerCase();
  if (text.includes('locked') || text.includes('dismissed') || text.includes('cancel')) return 'it is locked';
  if (text.includes('denied') || text.includes('permission')) return 'access was denied';
  return 'it did not answer';
}

function describe(backend: SecretBackend): string {
  switch (backend) {
    case 'secret-service':
      return 'Secret Service keyring';
    case 'macos-keychain':
      return 'macOS Keychain';
    case 'windows-credential-manager':
      return 'Windows Credential Manager';
    case 'safe-storage':
      return "app's safe storage";
    case 'file':
      return 'key file';
    case 'none':
      return 'nowhere';
  }
}
