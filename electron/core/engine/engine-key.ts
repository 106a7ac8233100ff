import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { TierName } from '../../../shared/api/index.ts';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import type { Logger } from '../../../shared/node/logger.ts';
import type { SecretStore } from '../secrets/index.ts';
import type { RunningService } from '../../../server/index.ts';

/**
 * The built-in engine's own API key where no keychain can hold it: a file in the engine's data
 * folder, beside the service's other secrets (`secret.key`, `provider-keys.json`), owner-only
 * (0600) and written whole (temp file, fsync, rename). It lasts across runs, so a generation
 * started with `--async` can be followed, waited for and cancelled by the next command, and
 * another process on the same folder can use the running engine (docs/security.md, "The engine's
 * own key"). The key is never logged; only this file and the keychain hold it.
 */
export const ENGINE_KEY_FILE = 'engine-key.json';

export function engineKeyPath(engineDataDir: string): string {
  return join(engineDataDir, ENGINE_KEY_FILE);
}

/** The stored key, or null when there is none (or the file is not one of ours). */
export async function readEngineKeyFile(engineDataDir: string): Promise<string | null> {
  try {
    const parsed = JSON.parse(await readFile(engineKeyPath(engineDataDir), 'utf8')) as { key?: unknown };
    return typeof parsed.key === 'string' && parsed.key.length > 0 ? parsed.key : null;
  } catch {
    return null;
  }
}

export async function writeEngineKeyFile(engineDataDir: string, key: string): Promise<void> {
  await atomicWriteFile(engineKeyPath(engineDataDir), `${JSON.stringify({ key })}\n`, 0o600);
}

export type EngineKeyStorage = 'keychain' | 'file' | 'ephemeral';

/** What the engine's key is made and checked with: the engine's own key methods. */
type KeyMethods = Pick<RunningService, 'createKey' | 'revokeKey' | 'listKeys'>;

interface KeyPlace {
  secrets: SecretStore;
  /** The engine's data folder (the key file's, and the keychain account's name). */
  dataDir: string;
  user: string;
  tier: TierName;
  logger: Logger;
}

/**
 * The engine's own key, kept across runs: the keychain first; without one (or one that refuses
 * it), the key file; only when neither can keep it, a key for this run (its id, to revoke on close).
 */
export async function engineKey(
  service: KeyMethods,
  place: KeyPlace,
): Promise<{ key: string; keyStorage: EngineKeyStorage; ephemeralId: string | null }> {
  const inKeychain = await keyFromKeychain(service, place);
  if (inKeychain !== null) return { key: inKeychain, keyStorage: 'keychain', ephemeralId: null };
  const inFile = await keyFromFile(service, place);
  if (inFile !== null) return { key: inFile, keyStorage: 'file', ephemeralId: null };
  const created = await service.createKey({ user: place.user, tier: place.tier, name: 'Clipdesk (this run)' });
  return { key: created.key, keyStorage: 'ephemeral', ephemeralId: created.id };
}

/** Whether `key` is one of the user's keys and not revoked (by its last 4 characters: the service keeps no more). */
async function isLive(service: KeyMethods, user: string, key: string): Promise<boolean> {
  return (await service.listKeys(user)).some((k) => k.revokedAt === null && k.last4 === key.slice(-4));
}

/**
 * The engine's key kept in the keychain across runs, or null when the keychain cannot hold it:
 * none present, or one that fails (a locked collection whose unlock prompt was dismissed). The
 * key file is then used, so a keychain problem never stops the app.
 */
async function keyFromKeychain(service: KeyMethods, place: KeyPlace): Promise<string | null> {
  const { secrets, user, tier, logger } = place;
  const account = localEngineKeyAccount(place.dataDir);
  let created: { id: string; key: string } | null = null;
  try {
    if (!(await secrets.status()).available) return null;
    const stored = await secrets.get(account);
    if (stored !== null && (await isLive(service, user, stored))) return stored;
    created = await service.createKey({ user, tier, name: 'Clipdesk app' });
    await secrets.set(account, created.key);
    return created.key;
  } catch (error) {
    logger.warn(
      { err: error },
      "the keychain cannot hold the Local engine key; keeping it in the engine's data folder",
    );
    // A key the keychain did not take must not stay valid with no one holding it.
    if (created) await service.revokeKey(created.id).catch(() => false);
    return null;
  }
}

/** The key file's key (made and written on first use), or null when the file cannot be written. */
async function keyFromFile(service: KeyMethods, place: KeyPlace): Promise<string | null> {
  const { dataDir, user, tier, logger } = place;
  const stored = await readEngineKeyFile(dataDir);
  if (stored !== null && (await isLive(service, user, stored))) return stored;
  const created = await service.createKey({ user, tier, name: 'Clipdesk (key file)' });
  try {
    await writeEngineKeyFile(dataDir, created.key);
    return created.key;
  } catch (error) {
    logger.warn(
      { err: error, file: engineKeyPath(dataDir) },
      'could not write the Local engine key file; using a key for this run only',
    );
    await service.revokeKey(created.id).catch(() => false);
    return null;
  }
}

/** The keychain account of the engine on `dataDir`. */
export function localEngineKeyAccount(dataDir: string): string {
  return `local-engine:${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}`;
}

/**
 * The keys the engine on `dataDir` may keep, as another process on the same folder reads them: the
 * keychain's, then the key file's (none yet: its owner may still be making it).
 */
export async function storedEngineKeys(
  secrets: SecretStore,
  dataDir: string,
): Promise<Array<{ key: string; storage: 'keychain' | 'file' }>> {
  const keys: Array<{ key: string; storage: 'keychain' | 'file' }> = [];
  const fromKeychain = await secrets
    .status()
    .then((s) => (s.available ? secrets.get(localEngineKeyAccount(dataDir)) : null))
    .catch(() => null);
  if (fromKeychain) keys.push({ key: fromKeychain, storage: 'keychain' });
  const fromFile = await readEngineKeyFile(dataDir);
  if (fromFile && fromFile !== fromKeychain) keys.push({ key: fromFile, storage: 'file' });
  return keys;
}
