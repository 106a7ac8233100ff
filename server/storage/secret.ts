import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { atomicWriteFile } from '../../shared/node/atomic-write.ts';
import type { Db } from './db.ts';

/**
 * The server's signing secret for upload and file URLs (and the key that seals webhook signing
 * secrets), so URLs stay valid across restarts and the CLI and the server agree on it.
 *
 * - SQLite (one node): kept in the data directory's secret.key (mode 0600), beside service.db but
 *   not in it, so a copy of the database alone opens no webhook secret.
 * - PostgreSQL (several nodes): kept in the database (settings `url_signing_secret`), so that every
 *   node signs and verifies alike: a URL signed by one node opens on any. The first node to start
 *   stores it (its data directory's secret.key when it has one, else a new one). A node whose own
 *   secret.key holds another secret is refused at start (SigningSecretMismatchError): it would sign
 *   URLs the others refuse.
 */
export class SigningSecretMismatchError extends Error {}

/** The settings row that holds the secret on PostgreSQL. */
export const SIGNING_SECRET_SETTING = 'url_signing_secret';
const SETTING = SIGNING_SECRET_SETTING;
const HEX = /^[0-9a-f]{64}$/;

/** The data directory's secret.key, or null when it has none; never creates one (export reads it). */
export async function readSecretFile(dataDir: string): Promise<Buffer | null> {
  try {
    const text = (await readFile(join(dataDir, 'secret.key'), 'utf8')).trim();
    if (HEX.test(text)) return Buffer.from(text, 'hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return null;
}

/** The data directory's secret, made on first use (SQLite). */
export async function loadOrCreateSecret(dataDir: string): Promise<Buffer> {
  const existing = await readSecretFile(dataDir);
  if (existing) return existing;
  const secret = randomBytes(32);
  await atomicWriteFile(join(dataDir, 'secret.key'), secret.toString('hex') + '\n', 0o600);
  return secret;
}

/** The secret this node signs with: the data directory's on SQLite, the database's on PostgreSQL. */
export async function loadSigningSecret(db: Db, dataDir: string, what: string): Promise<Buffer> {
  if (db.dialect === 'sqlite') return loadOrCreateSecret(dataDir);
  const own = await readSecretFile(dataDir);
  const read = async () =>
    (await db.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', SETTING))?.value;
  let stored = await read();
  if (stored === undefined) {
    // Two nodes starting at once: one insert wins, and both read the winner's.
    await db.run(
      'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      SETTING,
      (own ?? randomBytes(32)).toString('hex'),
    );
    stored = await read();
  }
  if (stored === undefined || !HEX.test(stored)) throw new Error(`${what} holds no valid URL signing secret`);
  if (own && own.toString('hex') !== stored)
    throw new SigningSecretMismatchError(
      `the URL signing secret in ${join(dataDir, 'secret.key')} differs from the one in ${what}, which the ` +
        'other nodes use: this node would sign URLs they refuse. Remove that secret.key (the database ' +
        "holds the service's secret) or point this node at its own database.",
    );
  return Buffer.from(stored, 'hex');
}
