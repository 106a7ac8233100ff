import { readFile } from 'node:fs/promises';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import type { ApiClient } from './client-types.ts';
import { isUnreachable } from './unreachable.ts';

type Listing = 'listModels' | 'listProviders';

/**
 * Compose offline (docs/workflows.md): the model and provider lists the service last gave, kept in a small
 * JSON file per profile, answer while the service cannot be reached, so a creator can still pick
 * a model and save jobs after a restart without a network (the jobs wait for the service).
 * Only a connection that could not be made falls back; any answer of the service is its own.
 * The file holds public catalog data only, never a key.
 */
export function withOfflineCatalog(api: ApiClient, file: string): ApiClient {
  let cache: Record<string, unknown> | null = null;
  let writing: Promise<void> = Promise.resolve();
  const load = async (): Promise<Record<string, unknown>> => {
    if (cache) return cache;
    try {
      cache = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    } catch {
      cache = {};
    }
    return cache;
  };
  const wrap = <K extends Listing>(name: K): ApiClient[K] => {
    const live = api[name].bind(api) as (...args: Parameters<ApiClient[K]>) => ReturnType<ApiClient[K]>;
    return (async (...args: Parameters<ApiClient[K]>) => {
      const key = `${name} ${JSON.stringify(args[0] ?? {})}`;
      try {
        const result = await live(...args);
        const table = await load();
        table[key] = result;
        writing = writing.then(() => atomicWriteFile(file, JSON.stringify(table))).catch(() => undefined);
        return result;
      } catch (error) {
        const kept = isUnreachable(error) ? (await load())[key] : undefined;
        if (kept === undefined) throw error;
        return kept;
      }
    }) as ApiClient[K];
  };
  api.listModels = wrap('listModels');
  api.listProviders = wrap('listProviders');
  return api;
}
