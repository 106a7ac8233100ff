import { randomBytes } from 'node:crypto';
import type { Permission, TierLimits, TierName } from '../../shared/api/index.ts';
import { PERMISSIONS, TIERS, TIER_NAMES } from '../../shared/api/index.ts';
import { constantTimeEqual, sha256Hex } from '../../shared/node/hash.ts';
import type { LimitColumns } from '../limits/account-limits.ts';
import { LIMIT_COLUMNS_SQL, accountLimits } from '../limits/account-limits.ts';
import { takeFromSql } from '../limits/rate-limiter.ts';
import type { WindowCounts, WindowStarts } from '../limits/rate-limiter.ts';
import type { Db } from '../storage/db.ts';

/**
 * API keys and users. A key is shown once, at creation; only its SHA-256 is stored. The key
 * embeds its id so lookup is by primary key and the secret part is compared in constant time
 * (looking a key up by its hash would make the index lookup the comparison).
 */
export interface CreatedKey {
  id: string;
  key: string;
  user: string;
  tier: TierName;
  /** The key's name: the one given, or the one derived when none was (derivedKeyName). */
  name: string;
  /** The key's webhook signing secret (`whsec_…`), shown once like the key (server/webhooks/secrets.ts). */
  webhookSecret?: string;
}

export interface KeyInfo {
  id: string;
  user: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  revokedAt: string | null;
  last4: string;
}

export interface AuthenticatedKey {
  keyId: string;
  keyName: string;
  user: string;
  tier: TierName;
  /** The tier's limits with the account's own (`users set-limits`) applied: what every check uses. */
  limits: TierLimits;
  permissions: ReadonlySet<Permission>;
}

const KEY_FORMAT = /^cdsk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export class KeyError extends Error {}

function isValidUserName(name: string): boolean {
  return USER_NAME.test(name);
}

export function parsePermissions(text: string): Permission[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  for (const p of parts) {
    if (!(PERMISSIONS as readonly string[]).includes(p))
      throw new KeyError(`unknown permission '${p}' (use ${PERMISSIONS.join(', ')})`);
  }
  return [...new Set(parts)] as Permission[];
}

export function isTierName(value: string): value is TierName {
  return (TIER_NAMES as readonly string[]).includes(value);
}

export async function createKey(
  db: Db,
  now: number,
  o: { user: string; tier?: TierName; name?: string; permissions?: Permission[] },
): Promise<CreatedKey> {
  if (!isValidUserName(o.user))
    throw new KeyError(`invalid user name '${o.user}' (letters, digits, . _ @ -; at most 64)`);
  if (o.tier !== undefined && !isTierName(o.tier)) throw new KeyError(`unknown tier '${String(o.tier)}'`);
  const permissions = o.permissions ?? [...PERMISSIONS];
  const idHex = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const key = `cdsk_${idHex}_${secret}`;
  const id = `key_${idHex}`;
  const existing = await db.get<{ tier: TierName }>('SELECT tier FROM users WHERE id = ?', o.user);
  let tier: TierName;
  if (existing) {
    tier = existing.tier;
    // Naming a tier for an existing user is a request to change it, so the printed tier is true.
    if (o.tier !== undefined && o.tier !== existing.tier) {
      await db.run('UPDATE users SET tier = ? WHERE id = ?', o.tier, o.user);
      tier = o.tier;
    }
  } else {
    tier = o.tier ?? 'free';
    await db.run('INSERT INTO users (id, tier, created_at) VALUES (?, ?, ?)', o.user, tier, now);
  }
  const name = o.name?.trim() || (await derivedKeyName(db, o.user, now));
  await db.run(
    'INSERT INTO api_keys (id, user_id, name, hash, last4, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    id,
    o.user,
    name,
    sha256Hex(key),
    key.slice(-4),
    permissions.join(','),
    now,
  );
  return { id, key, user: o.user, tier, name };
}

/**
 * A name for a key made without one (the spec has keys created "by naming the key"): which of the
 * account's keys it is and the day it was made, e.g. `key 2 (2026-11-27)`, so usage per key and
 * `keys list` tell keys apart; `keys create` prints it (docs/api.md).
 */
async function derivedKeyName(db: Db, user: string, now: number): Promise<string> {
  const row = await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?', user);
  return `key ${Number(row?.n ?? 0) + 1} (${new Date(now).toISOString().slice(0, 10)})`;
}

/** Revokes a key; returns false when there is no such key. Revoking twice is harmless. */
export async function revokeKey(db: Db, now: number, id: string): Promise<boolean> {
  const row = await db.get<{ revoked_at: number | null }>('SELECT revoked_at FROM api_keys WHERE id = ?', id);
  if (!row) return false;
  if (row.revoked_at === null) await db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', now, id);
  return true;
}

export async function listKeys(db: Db, user: string): Promise<KeyInfo[]> {
  const rows = await db.all<{
    id: string;
    user_id: string;
    name: string;
    permissions: string;
    created_at: number;
    revoked_at: number | null;
    last4: string;
  }>(
    'SELECT id, user_id, name, permissions, created_at, revoked_at, last4 FROM api_keys WHERE user_id = ? ORDER BY created_at, id',
    user,
  );
  return rows.map((r) => ({
    id: r.id,
    user: r.user_id,
    name: r.name,
    permissions: r.permissions.split(',').filter(Boolean) as Permission[],
    createdAt: new Date(r.created_at).toISOString(),
    revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at).toISOString(),
    last4: r.last4,
  }));
}

/** Sets a user's tier, creating the user if needed. */
export async function setTier(db: Db, now: number, user: string, tier: TierName): Promise<void> {
  if (!isValidUserName(user)) throw new KeyError(`invalid user name '${user}'`);
  if (!isTierName(tier)) throw new KeyError(`unknown tier '${String(tier)}' (use ${TIER_NAMES.join(', ')})`);
  await db.run(
    'INSERT INTO users (id, tier, created_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET tier = excluded.tier',
    user,
    tier,
    now,
  );
}

/** A key with its account, tier and limits, as verifyKey and keyById read it. */
interface KeyRow extends LimitColumns {
  id: string;
  name: string;
  hash: string;
  permissions: string;
  revoked_at: number | null;
  user_id: string;
  tier: TierName;
}

// The account's limits come in the same lookup, so custom limits cost the hot path nothing.
const KEY_ROW_SQL = `SELECT k.id, k.name, k.hash, k.permissions, k.revoked_at, u.id AS user_id, u.tier, ${LIMIT_COLUMNS_SQL}
     FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN user_limits l ON l.user_id = u.id WHERE k.id = ?`;

async function keyRow(db: Db, keyId: string): Promise<KeyRow | undefined> {
  return await db.get<KeyRow>(KEY_ROW_SQL, keyId);
}

function authenticated(row: KeyRow): AuthenticatedKey {
  return {
    keyId: row.id,
    keyName: row.name,
    user: row.user_id,
    tier: row.tier,
    limits: accountLimits(row.tier, row),
    permissions: new Set(row.permissions.split(',').filter(Boolean) as Permission[]),
  };
}

/** Checks a presented key; null when it is malformed, unknown or revoked. */
export async function verifyKey(db: Db, presented: string): Promise<AuthenticatedKey | null> {
  const match = KEY_FORMAT.exec(presented);
  if (!match) return null;
  const row = await keyRow(db, `key_${match[1]}`);
  // Hash and compare even when the row is missing, so a miss costs the same as a wrong secret.
  const matches = constantTimeEqual(sha256Hex(presented), row?.hash ?? '0'.repeat(64));
  if (!row || !matches || row.revoked_at !== null) return null;
  return authenticated(row);
}

/**
 * A key by its id, as verifyKey would authenticate it (no secret): an asynchronous generation
 * resumed after a restart runs with its key's current limits. Null when the key is gone or revoked.
 */
export async function keyById(db: Db, keyId: string): Promise<AuthenticatedKey | null> {
  const row = await keyRow(db, keyId);
  return row && row.revoked_at === null ? authenticated(row) : null;
}

/** A tier's rate limit for `window` as SQL over `users u` (the tiers are the code's own constants). */
function tierRateSql(window: 'minute' | 'hour' | 'day'): string {
  const cases = TIER_NAMES.map((tier) => `WHEN '${tier}' THEN ${TIERS[tier].rate[window]}`).join(' ');
  return `CASE u.tier ${cases} END`;
}

/**
 * verifyKey and the rate limiter's count (rate-limiter.ts) as one statement: on PostgreSQL each
 * is a round trip, and every authenticated request pays both. The secret's hash is compared in the
 * statement, so a request with a wrong secret counts nothing against the key's account (its id is
 * in the key, and not secret). A revoked, unknown or mismatched key finds no row and is counted
 * nowhere; a found key's account is counted in the windows of `starts` unless one is full, and
 * then the key's own count (GET /usage per key, as rate-limiter.ts's TAKE_AND_COUNT_KEY_SQL).
 */
const KEY_COUNTING_SQL = `WITH k AS (
  SELECT k.id, k.name, k.hash, k.permissions, k.revoked_at, u.id AS user_id, u.tier, ${LIMIT_COLUMNS_SQL},
    coalesce(l.rpm, ${tierRateSql('minute')}) AS rate_minute,
    coalesce(l.rph, ${tierRateSql('hour')}) AS rate_hour,
    coalesce(l.rpd, ${tierRateSql('day')}) AS rate_day
  FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN user_limits l ON l.user_id = u.id
  WHERE k.id = ? AND k.hash = ? AND k.revoked_at IS NULL
), counted AS (${takeFromSql('k')}),
key_counted AS (UPDATE api_keys SET requests = requests + 1 WHERE id = (SELECT id FROM k) AND EXISTS (SELECT 1 FROM counted))
SELECT k.*, counted.minute_count, counted.hour_count, counted.day_count FROM k LEFT JOIN counted ON TRUE`;

/**
 * The key and its request counted (see KEY_COUNTING_SQL): null when the key is malformed,
 * unknown or revoked; `counts` null when a window was full (nothing counted: RateLimiter.decide).
 */
export async function verifyKeyCounting(
  db: Db,
  presented: string,
  starts: WindowStarts,
): Promise<{ auth: AuthenticatedKey; counts: WindowCounts | null } | null> {
  const match = KEY_FORMAT.exec(presented);
  if (!match) return null;
  const row = await db.get<
    KeyRow & { minute_count: number | null; hour_count: number | null; day_count: number | null }
  >(KEY_COUNTING_SQL, `key_${match[1]}`, sha256Hex(presented), starts.minute, starts.hour, starts.day);
  if (!row) return null;
  const counts =
    row.minute_count === null || row.hour_count === null || row.day_count === null
      ? null
      : { minute: row.minute_count, hour: row.hour_count, day: row.day_count };
  return { auth: authenticated(row), counts };
}
