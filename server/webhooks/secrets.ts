import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { CreatedKey } from '../auth/api-keys.ts';
import { createKey } from '../auth/api-keys.ts';
import type { Db } from '../storage/db.ts';

/** Standard Webhooks' secret form: `whsec_` and the base64 of the key bytes. */
const PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/**
 * How long a rotated-out secret keeps signing beside the new one: the day a delivery is retried
 * for (its pending retries verify with either), and time for receivers to switch.
 */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
/** Sealed values: `v1.<iv>.<tag>.<ciphertext>`, each base64url (AES-256-GCM). */
const SEALED = /^v1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

/** A new signing secret in Standard Webhooks form. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a `whsec_…` secret: its decoded bytes (what the receiver's library uses). */
export function webhookSecretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/**
 * Per-key webhook signing secrets. Unlike API keys (stored as hashes), the service needs the secret
 * itself to sign, so it is kept sealed with AES-256-GCM under a key derived (HKDF) from the data
 * directory's secret.key: a copy of service.db alone does not reveal any secret. The key id is the
 * GCM associated data, so a sealed value moved to another key's row does not open. A secret is
 * shown only when made (`keys create`, `keys rotate-webhook-secret`); nothing reads it back out.
 */
export class WebhookSecrets {
  private readonly db: Db;
  private readonly key: Buffer;

  /** `dataSecret`: the data directory's secret (server/storage/secret.ts). */
  constructor(db: Db, dataSecret: Buffer) {
    this.db = db;
    this.key = Buffer.from(hkdfSync('sha256', dataSecret, Buffer.alloc(0), 'clipdesk webhook signing secrets', 32));
  }

  /**
   * Makes (or replaces) the key's secret and returns it, for showing once; throws for an unknown key.
   * The secret it replaces keeps signing beside it for ROTATION_OVERLAP_MS from `now` (receivers
   * still on it keep verifying, docs/api.md); a key's first secret replaces none. `db`: a
   * transaction's handle, when the key is being made in it.
   */
  async rotate(keyId: string, now: number, db: Db = this.db): Promise<string> {
    const secret = newWebhookSecret();
    // The sealed value moves as it is: its associated data is the key id, which stays.
    const changed = (
      await db.run(
        `UPDATE api_keys SET previous_webhook_secret = webhook_secret,
           previous_webhook_secret_until = CASE WHEN webhook_secret IS NULL THEN NULL ELSE CAST(? AS BIGINT) END,
           webhook_secret = ?
         WHERE id = ?`,
        now + ROTATION_OVERLAP_MS,
        this.seal(keyId, secret),
        keyId,
      )
    ).changes;
    if (Number(changed) === 0) throw new UnknownKeyError(keyId);
    return secret;
  }

  /**
   * The key's secrets for signing at `now`: its current one, then the one it replaced while that
   * is within its overlap (a delivery carries a signature by each). A key made before webhooks
   * existed gets one here, on its first delivery, so every delivery is signed; its owner learns
   * it from `keys rotate-webhook-secret`. Null when the key does not exist (any more).
   */
  async forSigning(keyId: string, now: number): Promise<string[] | null> {
    const row = await this.db.get<{
      webhook_secret: string | null;
      previous_webhook_secret: string | null;
      previous_webhook_secret_until: number | string | null;
    }>(
      'SELECT webhook_secret, previous_webhook_secret, previous_webhook_secret_until FROM api_keys WHERE id = ?',
      keyId,
    );
    if (!row) return null;
    if (row.webhook_secret === null) return [await this.rotate(keyId, now)];
    const current = this.open(keyId, row.webhook_secret);
    const until = row.previous_webhook_secret_until === null ? null : Number(row.previous_webhook_secret_until);
    if (row.previous_webhook_secret === null || until === null || until <= now) return [current];
    return [current, this.open(keyId, row.previous_webhook_secret)];
  }

  private seal(keyId: string, secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(keyId));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  private open(keyId: string, sealed: string): string {
    const m = SEALED.exec(sealed);
    if (!m) throw new Error(`the webhook secret of ${keyId} is not in a known form`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(m[1]!, 'base64url'));
      decipher.setAAD(Buffer.from(keyId));
      decipher.setAuthTag(Buffer.from(m[2]!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(m[3]!, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // Never the value: only that it does not open (secret.key replaced, or the row edited).
      throw new Error(
        `the webhook secret of ${keyId} does not open with this data directory's secret.key; ` +
          `make a new one with keys rotate-webhook-secret ${keyId}`,
      );
    }
  }
}

export class UnknownKeyError extends Error {
  constructor(keyId: string) {
    super(`no key ${keyId}`);
    this.name = 'UnknownKeyError';
  }
}

/** `keys create`: the key and its webhook signing secret, made together (both shown once). */
export async function createKeyWithWebhookSecret(
  db: Db,
  secrets: WebhookSecrets,
  now: number,
  o: Parameters<typeof createKey>[2],
): Promise<CreatedKey & { webhookSecret: string }> {
  return db.transaction(async (tx) => {
    const created = await createKey(tx, now, o);
    return { ...created, webhookSecret: await secrets.rotate(created.id, now, tx) };
  });
}

/** Whether the key has a webhook signing secret (GET /usage); never the secret. */
export async function webhookSecretExists(db: Db, keyId: string): Promise<boolean> {
  const row = await db.get<{ present: number }>(
    'SELECT CASE WHEN webhook_secret IS NULL THEN 0 ELSE 1 END AS present FROM api_keys WHERE id = ?',
    keyId,
  );
  return row?.present === 1;
}
