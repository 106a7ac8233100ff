import type { ApiClient } from './client-types.ts';

type Listing = 'listModels' | 'listProviders';

/** How long the app reuses a model or provider list before asking the service again. */
export const CATALOG_CACHE_MS = 60_000;

export interface CatalogCache {
  /** Forgets every list: the next read asks the service (a key, a switch or a refresh changed them). */
  clear(): void;
}

/**
 * The model and provider lists, asked for once and shared: the session's start, Compose's picker,
 * the providers panel and the downloader's provider names all read them, and each read is a
 * request counted against the account's rate limit (docs/api.md, "What counts against the rate
 * limits"). A read made while another is in flight joins it; an answer is reused for
 * `CATALOG_CACHE_MS`, or until `clear()`; a failure is never kept. A shared read runs without the
 * caller's signal (one caller giving up must not fail the others), under the client's deadline.
 */
export function withCatalogCache(api: ApiClient, now: () => number = Date.now): CatalogCache {
  const kept = new Map<string, { at: number; answer: Promise<unknown> }>();
  const wrap = <K extends Listing>(name: K): ApiClient[K] => {
    const live = api[name].bind(api) as (query: Parameters<ApiClient[K]>[0]) => ReturnType<ApiClient[K]>;
    return ((query: Parameters<ApiClient[K]>[0]) => {
      const key = `${name} ${JSON.stringify(query ?? {})}`;
      const hit = kept.get(key);
      if (hit && now() - hit.at < CATALOG_CACHE_MS) return hit.answer;
      const answer = live(query);
      kept.set(key, { at: now(), answer });
      answer.catch(() => {
        if (kept.get(key)?.answer === answer) kept.delete(key);
      });
      return answer;
    }) as ApiClient[K];
  };
  api.listModels = wrap('listModels');
  api.listProviders = wrap('listProviders');
  return { clear: () => kept.clear() };
}
