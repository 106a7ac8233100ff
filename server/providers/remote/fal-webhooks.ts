import { createHash, createPublicKey, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/**
 * fal's webhook signatures (docs.fal.ai, "Webhooks" → "Verifying your webhook"): each delivery
 * carries `x-fal-webhook-request-id`, `-user-id`, `-timestamp` (Unix seconds) and `-signature`
 * (hex), an ED25519 signature of `request id \n user id \n timestamp \n hex(sha256(raw body))` by
 * one of the keys fal publishes as a JWKS (OKP / Ed25519, `x` base64url). Timestamps more than
 * five minutes off are refused (replays); keys are cached for at most 24 hours, as fal asks.
 */
export const FAL_JWKS_URL = 'https://rest.fal.ai/.well-known/jwks.json';

const TOLERANCE_SECONDS = 300;
const KEYS_KEEP_MS = 24 * 3_600_000;
/**
 * A signature no cached key verifies fetches the keys again (fal may have rotated them), but not
 * more often than this: a flood of forged deliveries costs fal's JWKS one fetch per interval.
 */
const REFETCH_MIN_MS = 5 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;
const JWKS_MAX_CHARS = 64 * 1024;
const SIGNATURE_HEX = /^[0-9a-f]{128}$/i;

interface CachedKeys {
  keys: KeyObject[];
  fetchedAt: number;
}

/** By JWKS URL: the keys last fetched, and the fetch under way (shared by every delivery waiting). */
const cached = new Map<string, CachedKeys>();
const fetching = new Map<string, Promise<CachedKeys>>();

/** Whether the delivery carries a valid fal signature over this exact body, by a key from `jwksUrl`. */
export async function verifyFalWebhook(
  headers: Record<string, string>,
  body: Buffer,
  jwksUrl: string,
  now = Date.now(),
): Promise<boolean> {
  const requestId = headers['x-fal-webhook-request-id'];
  const userId = headers['x-fal-webhook-user-id'];
  const timestamp = headers['x-fal-webhook-timestamp'];
  const signature = headers['x-fal-webhook-signature'];
  if (!requestId || !userId || !timestamp || !signature) return false;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  if (!SIGNATURE_HEX.test(signature)) return false;
  const digest = createHash('sha256').update(body).digest('hex');
  const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`, 'utf8');
  const sig = Buffer.from(signature, 'hex');
  const signedBy = (keys: KeyObject[]) => keys.some((key) => verify(null, message, key, sig));
  const known = cached.get(jwksUrl);
  if (!known || now - known.fetchedAt > KEYS_KEEP_MS) {
    await fetchKeys(jwksUrl, now).catch(() => undefined);
    return signedBy(cached.get(jwksUrl)?.keys ?? []);
  }
  if (signedBy(known.keys)) return true;
  if (now - known.fetchedAt < REFETCH_MIN_MS) return false;
  await fetchKeys(jwksUrl, now).catch(() => undefined);
  const fresh = cached.get(jwksUrl);
  return fresh !== undefined && fresh !== known && signedBy(fresh.keys);
}

function fetchKeys(url: string, now: number): Promise<CachedKeys> {
  let pending = fetching.get(url);
  if (!pending) {
    pending = loadKeys(url, now).finally(() => fetching.delete(url));
    fetching.set(url, pending);
  }
  return pending;
}

async function loadKeys(url: string, now: number): Promise<CachedKeys> {
  // A failed fetch counts as one, so that the next is REFETCH_MIN_MS away too.
  const failed = { keys: cached.get(url)?.keys ?? [], fetchedAt: now };
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
    const text = await response.text();
    if (!response.ok || text.length > JWKS_MAX_CHARS) throw new Error(`fal's JWKS answered HTTP ${response.status}`);
    const keys = parseJwks(JSON.parse(text) as unknown);
    if (keys.length === 0) throw new Error("fal's JWKS holds no Ed25519 key");
    const fresh = { keys, fetchedAt: now };
    cached.set(url, fresh);
    return fresh;
  } catch (error) {
    cached.set(url, failed);
    throw error;
  }
}

/** The Ed25519 public keys of a JWKS document; other keys are skipped. */
function parseJwks(document: unknown): KeyObject[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return [];
  const out: KeyObject[] = [];
  for (const jwk of keys as Array<Record<string, unknown>>) {
    if (jwk?.['kty'] !== 'OKP' || jwk['crv'] !== 'Ed25519' || typeof jwk['x'] !== 'string') continue;
    try {
      out.push(createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk['x'] }, format: 'jwk' }));
    } catch {
      // Not a valid key: skipped.
    }
  }
  return out;
}
