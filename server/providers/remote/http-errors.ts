/**
 * What an HTTP answer from a provider means to the service, shared by the adapters whose SDKs
 * surface the status and headers of a failed call (the Stainless-generated `lumaai` and `openai`
 * both do). Each adapter still reads its own provider's error body; only the meaning of the status
 * line and `Retry-After` lives here.
 */
import type { ProviderErrorClass } from './contract.ts';

/** The error class of a failed HTTP answer, by status alone. */
export function errorClassForStatus(status: number): ProviderErrorClass {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'server';
  if (status === 400 || status === 409 || status === 413 || status === 415 || status === 422) return 'invalid_input';
  return 'failed';
}

/**
 * Seconds to wait from `Retry-After` (seconds or an HTTP date) or the `retry-after-ms` some APIs
 * send; `headers` is a fetch `Headers` or a plain record of lower-cased names (SDKs differ).
 */
export function retryAfterSeconds(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    if (headers && typeof headers === 'object') {
      const value = (headers as Record<string, unknown>)[name];
      return typeof value === 'string' ? value : undefined;
    }
    return undefined;
  };
  const ms = Number(get('retry-after-ms'));
  if (get('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * Removes the key from text a provider sent back (some echo it, masked or not, in their 401
 * message), so that no error message can carry it further.
 */
export function withoutKey(text: string, apiKey: string): string {
  const scrubbed = apiKey.length > 0 ? text.split(apiKey).join('[key]') : text;
  return scrubbed.length > 500 ? `${scrubbed.slice(0, 500)}…` : scrubbed;
}

/** A JSON body that did not parse, as the SDKs' fetch implementations report it. */
export function isUnparsableBody(err: unknown): boolean {
  if (err instanceof SyntaxError) return true;
  // node-fetch (used by older Stainless SDKs such as lumaai) wraps it: FetchError of type invalid-json.
  return err instanceof Error && (err as { type?: unknown }).type === 'invalid-json';
}
