import { describe, expect, it } from 'vitest';
import { CATALOG_CACHE_MS, ServiceError, withCatalogCache } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, ModelPage } from '../../../../../electron/core/api/index.ts';

// The session's one read of the model and provider lists (docs/api.md, "What counts against the
// rate limits"): each read is a counted request, so readers share one.
function fakeApi() {
  const asked: string[] = [];
  let fail = false;
  const api = {
    listModels: (query: unknown) => {
      asked.push(`models ${JSON.stringify(query)}`);
      return fail
        ? Promise.reject(new ServiceError('network_error', 'down'))
        : Promise.resolve({ total: 1, models: [{ id: 'm' }] } as unknown as ModelPage);
    },
    listProviders: (query: unknown) => {
      asked.push(`providers ${JSON.stringify(query)}`);
      return Promise.resolve({ total: 0, providers: [] });
    },
  } as unknown as ApiClient;
  return { api, asked, failNext: (f: boolean) => (fail = f) };
}

describe('the catalog cache', () => {
  it('joins a read in flight, reuses an answer for a while, and asks again after clear()', async () => {
    let now = 1_000;
    const { api, asked } = fakeApi();
    const cache = withCatalogCache(api, () => now);
    const [a, b] = await Promise.all([api.listModels({ page: 0 }), api.listModels({ page: 0 })]);
    expect(a).toBe(b);
    await api.listModels({ page: 0 });
    await api.listProviders({ limit: 100, page: 0 });
    await api.listProviders({ limit: 100, page: 0 });
    expect(asked).toEqual(['models {"page":0}', 'providers {"limit":100,"page":0}']);
    // Another page is another read.
    await api.listModels({ page: 1 });
    expect(asked).toHaveLength(3);
    now += CATALOG_CACHE_MS;
    await api.listModels({ page: 0 });
    expect(asked).toHaveLength(4);
    cache.clear();
    await api.listProviders({ limit: 100, page: 0 });
    expect(asked).toHaveLength(5);
  });

  it('never keeps a failure: the next read asks again', async () => {
    const { api, asked, failNext } = fakeApi();
    withCatalogCache(api, () => 0);
    failNext(true);
    await expect(api.listModels({ page: 0 })).rejects.toMatchObject({ code: 'network_error' });
    failNext(false);
    await expect(api.listModels({ page: 0 })).resolves.toMatchObject({ total: 1 });
    expect(asked).toHaveLength(2);
  });
});
