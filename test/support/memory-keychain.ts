import type { SecretStore } from '../../electron/core/secrets/index.ts';

/**
 * A keychain kept in a Map, for tests and benchmarks that run the app's core where no OS keychain
 * may be running (the real one is tested in core/secrets and core/providers/key-store tests).
 */
export function memoryKeychain(): SecretStore {
  const entries = new Map<string, string>();
  return {
    status: () => Promise.resolve({ backend: 'secret-service', available: true, message: 'ok' }),
    get: (a) => Promise.resolve(entries.get(a) ?? null),
    set: (a, s) => Promise.resolve(void entries.set(a, s)),
    delete: (a) => Promise.resolve(entries.delete(a)),
    info: (a) =>
      Promise.resolve({ hasKey: entries.has(a), last4: entries.get(a)?.slice(-4) ?? null, backend: 'secret-service' }),
  };
}

/** The keychain of a machine without one (a headless box): nothing can be stored there. */
export function noKeychain(): SecretStore {
  return {
    status: () => Promise.resolve({ backend: 'none', available: false, message: 'no OS keychain on this machine' }),
    get: () => Promise.resolve(null),
    set: () => Promise.reject(new Error('no OS keychain on this machine')),
    delete: () => Promise.resolve(false),
    info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'none' }),
  };
}
