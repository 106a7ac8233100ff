/**
 * Errors of the connection itself (docs/workflows.md, "Compose offline, submit later"): nothing reached the service, so
 * trying again later — with the same Idempotency-Key — can never make a second generation.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** True when the error says the service could not be reached at all (no connection was made). */
export function isUnreachable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error as { code?: unknown; cause?: unknown; errors?: unknown } | null; e && !seen.has(e);) {
    seen.add(e);
    if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return true;
    // Happy eyeballs: an AggregateError of one failure per address.
    if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => isUnreachable(x))) return true;
    e = e.cause as typeof e;
  }
  return false;
}
