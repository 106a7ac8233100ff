// The rules the Settings → Providers form checks as the creator types, shared with main's IPC
// schemas (schemas/providers.ts). Free of zod: the renderer's first screen loads this module, and
// the schema library stays off its startup path (docs/architecture.md, "The renderer's bundle").
import { PROVIDER_KEY_MAX, PROVIDER_KEY_MIN, providerKeyFault } from '../api/provider-keys.ts';

/** The WHATWG URL parser of every runtime this runs in (Node, Chromium); shared/ has neither's types. */
declare const URL: { canParse(input: string): boolean };

/**
 * Why a pasted key cannot be a provider key, or null, under the rule the service applies too
 * (shared/api/provider-keys.ts). Whitespace is refused rather than trimmed: a key pasted with a
 * line break or a space in it is a paste that went wrong, and the user should see it rather than
 * have a different string stored. The renderer shows the same message before sending.
 */
export function providerKeyProblem(key: string): string | null {
  switch (providerKeyFault(key)) {
    case null:
      return null;
    case 'whitespace':
      return 'The key contains a space or a line break. Paste the key alone, with nothing around it.';
    case 'empty':
    case 'too_short':
      return `That is too short to be an API key (at least ${PROVIDER_KEY_MIN} characters).`;
    case 'too_long':
      return `That is too long to be an API key (at most ${PROVIDER_KEY_MAX} characters).`;
    case 'characters':
      return 'The key contains characters no API key has.';
  }
}

/**
 * Why a typed base URL cannot be used, or null. It must parse as a URL and be written with its
 * scheme in full (`https://…`, never `https:host`), as the providers' SDKs join paths onto it.
 */
export function providerBaseUrlProblem(url: string): string | null {
  const typed = url.trim();
  // The URL parser drops tabs and line breaks silently: a pasted address with one in it is a paste gone wrong.
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (!URL.canParse(typed) || /[\u0000-\u001f\u007f]/.test(typed))
    return 'Not a URL. Type the full address, starting with https://';
  if (!/^https?:\/\//i.test(typed)) return 'The base URL must start with http:// or https://';
  if (/^https?:\/\/[^/?#]*@/i.test(typed)) return 'The base URL must not carry a user name or password.';
  if (/[?#]/.test(typed)) return 'The base URL must not have a query (?…) or fragment (#…).';
  return null;
}

/** Why a remote profile cannot refresh its models from here (the button says it; main refuses with it). */
export const REMOTE_MODEL_LIST = 'This service keeps its own model list; refresh it there';
