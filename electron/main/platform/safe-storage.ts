import type { SafeStorage } from 'electron';
import path from 'node:path';
import type { SecretCipher } from '../../core/secrets/index.ts';

/**
 * Electron's safeStorage as the keychain's fallback, only where it really encrypts: on Linux its
 * `basic_text` backend is a hard-coded password, which would be pretending.
 */
export function safeStorageCipher(
  safeStorage: Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'> & {
    getSelectedStorageBackend?: () => string;
  },
  userData: string,
  platform: NodeJS.Platform,
): SecretCipher | undefined {
  if (!safeStorage.isEncryptionAvailable()) return undefined;
  const backendName =
    platform === 'linux'
      ? (safeStorage.getSelectedStorageBackend?.() ?? 'unknown')
      : platform === 'win32'
        ? 'dpapi'
        : 'keychain';
  if (backendName === 'basic_text' || backendName === 'unknown') return undefined;
  return {
    backendName,
    encrypt: (plain) => safeStorage.encryptString(plain),
    decrypt: (data) => safeStorage.decryptString(data),
    file: path.join(userData, 'secrets.enc.json'),
  };
}
