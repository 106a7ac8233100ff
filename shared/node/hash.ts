import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Hex SHA-256 of a string or bytes: how API keys are stored (never the key itself). */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash('sha256').update(input).digest('hex');
}

/** Base64url HMAC-SHA-256: signs upload and file URLs with the server's secret. */
export function hmacBase64Url(secret: Uint8Array | string, message: string): string {
  return createHmac('sha256', secret).update(message).digest('base64url');
}

/**
 * Compares two strings without leaking where they differ. Unequal lengths return false at once:
 * the inputs here are fixed-length digests, so the length says nothing secret.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** A random, URL-safe token with `bytes` bytes of entropy. */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}
