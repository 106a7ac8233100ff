import { ApiError } from '../errors.ts';

/** The request fields that hold a URL the service stores and later uses. */
const URL_FIELDS = ['webhook_url', 'image_url'] as const;

/**
 * Control characters and whitespace: a URL parser drops some (tab, line feeds) and percent-encodes
 * others, so the URL used would differ from the one given, stored and shown (docs/security.md).
 */
const UNSAFE = /[\p{Cc}\s]/u;

/** Whether `raw` holds a control character or whitespace anywhere. */
export function hasUnsafeCharacters(raw: string): boolean {
  return UNSAFE.test(raw);
}

/**
 * A generation request with its URL fields refused when they hold a control character or
 * whitespace (400), and otherwise replaced by their normalized form (WHATWG URL `href`): the form
 * the service stores, shows and uses. A field that does not parse is left for its own check.
 */
export function normalizeUrlFields(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  let out: Record<string, unknown> | undefined;
  for (const field of URL_FIELDS) {
    const value = (raw as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    if (hasUnsafeCharacters(value))
      throw new ApiError(
        'invalid_request_error',
        `${field} must not contain whitespace or control characters (percent-encode them)`,
      );
    if (!URL.canParse(value)) continue;
    const normalized = new URL(value).href;
    if (normalized === value) continue;
    out ??= { ...(raw as Record<string, unknown>) };
    out[field] = normalized;
  }
  return out ?? raw;
}
