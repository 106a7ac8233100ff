import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceError, withOfflineCatalog } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, ModelPage } from '../../../../../electron/core/api/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'offline-catalog-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const refused = () =>
  new ServiceError('network_error', 'Could not reach the service', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });

function fakeApi(answer: () => Promise<ModelPage>): ApiClient {
  return {
    listModels: () => answer(),
    listProviders: () => Promise.resolve({ total: 0, providers: [] }),
  } as unknown as ApiClient;
}

describe('the offline catalog', () => {
  it('answers with the last list only while the service cannot be reached, also from a new client', async () => {
    const file = join(dir, 'catalog.json');
    const page = { total: 1, models: [{ id: 'm' }] } as unknown as ModelPage;
    let next: () => Promise<ModelPage> = () => Promise.resolve(page);
    const api = withOfflineCatalog(
      fakeApi(() => next()),
      file,
    );
    expect(await api.listModels({ page: 0 })).toEqual(page);
    next = () => Promise.reject(refused());
    expect(await api.listModels({ page: 0 })).toEqual(page);
    await expect(api.listModels({ page: 1 })).rejects.toMatchObject({ code: 'network_error' });
    // The service answered: its own error, never the old list.
    next = () => Promise.reject(new ServiceError('authentication_error', 'Invalid API key', { status: 401 }));
    await expect(api.listModels({ page: 0 })).rejects.toMatchObject({ code: 'authentication_error' });
    // A restart: a new client on the same file.
    for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
    const again = withOfflineCatalog(
      fakeApi(() => Promise.reject(refused())),
      file,
    );
    expect(await again.listModels({ page: 0 })).toEqual(page);
  });
});
