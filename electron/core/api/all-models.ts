import type { ModelRecord } from '../../../shared/api/index.ts';
import type { ApiClient } from './client-types.ts';

/**
 * Every model of the service's catalog, read page by page (`GET /models`, 100 a page, at most
 * 50 pages): what Compose's pickers show and what budgets price a job by.
 */
export async function listAllModels(api: Pick<ApiClient, 'listModels'>, signal?: AbortSignal): Promise<ModelRecord[]> {
  const all: ModelRecord[] = [];
  for (let page = 0; page < 50; page++) {
    const res = await api.listModels({ limit: 100, page }, signal ? { signal } : {});
    all.push(...res.models);
    if (all.length >= res.total || res.models.length === 0) break;
  }
  return all;
}
