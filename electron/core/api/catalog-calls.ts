/** The client's catalog calls: the service's models and providers. */
import { SpecModelRecord, SpecProviderRecord, readModelRecord, readProviderRecord } from '../../../shared/api/index.ts';
import type { ModelRecord } from '../../../shared/api/index.ts';
import type { ApiClient, ModelPage, PageInput, RequestOptions } from './client-types.ts';
import { isMissingEndpoint, listOf, pageQuery, safeDecode, singleRecord } from './records.ts';
import { read } from './transport.ts';
import type { Transport } from './transport.ts';

export type CatalogCalls = Pick<ApiClient, 'listModels' | 'getModel' | 'listProviders' | 'getProvider'>;

function listModels(t: Transport, query: PageInput | undefined, opts: RequestOptions | undefined): Promise<ModelPage> {
  const ModelList = listOf('models', SpecModelRecord).transform((r) => ({
    total: r.total,
    models: r.items.map((m, i) => readModelRecord(m, `result.models.${i}`, t.note)),
  }));
  return read(t, '/models', ModelList, opts, pageQuery(query));
}

/**
 * A model from `GET /models`, by its id with or without `:version`, or by `base/slug`: how a
 * service without `GET /models/:id` is asked.
 */
async function findListedModel(
  t: Transport,
  id: string,
  opts: RequestOptions | undefined,
): Promise<ModelRecord | null> {
  const wanted = safeDecode(id).toLowerCase();
  const bare = wanted.split(':')[0];
  for (let page = 0; page < 50; page++) {
    const res = await listModels(t, { limit: 100, page }, opts);
    const exact = res.models.find((m) => m.id.toLowerCase() === wanted);
    const loose = res.models.find((m) => m.id.toLowerCase().split(':')[0] === bare || `${m.base}/${m.slug}` === bare);
    if (exact ?? loose) return (exact ?? loose)!;
    if (res.models.length === 0 || (page + 1) * 100 >= res.total) return null;
  }
  return null;
}

export function catalogCalls(t: Transport): CatalogCalls {
  const modelSchema = (where: string) => SpecModelRecord.transform((m) => readModelRecord(m, where, t.note));
  const providerSchema = (where: string) => SpecProviderRecord.transform((p) => readProviderRecord(p, where, t.note));
  const ProviderList = listOf('providers', SpecProviderRecord).transform((r) => ({
    total: r.total,
    providers: r.items.map((p, i) => readProviderRecord(p, `result.providers.${i}`, t.note)),
  }));
  return {
    listModels: (query, opts) => listModels(t, query, opts),
    async getModel(id, opts) {
      try {
        return await read(
          t,
          `/models/${encodeURIComponent(safeDecode(id))}`,
          singleRecord(modelSchema('result')),
          opts,
        );
      } catch (error) {
        // The spec names `/models/:id` without its method: a service may answer it 404 or 405 and
        // still list the model, so the list decides.
        if (!isMissingEndpoint(error)) throw error;
        const listed = await findListedModel(t, id, opts);
        if (listed === null) throw error;
        return listed;
      }
    },
    listProviders: (query, opts) => read(t, '/providers', ProviderList, opts, pageQuery(query)),
    getProvider: (id, opts) =>
      read(t, `/providers/${encodeURIComponent(id)}`, singleRecord(providerSchema('result')), opts),
  };
}
