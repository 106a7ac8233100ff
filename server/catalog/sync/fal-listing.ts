import { z } from 'zod';
import { fetchListing, ListingError, plainText } from './fetch-json.ts';
import type { ListingLimits } from './fetch-json.ts';
import { LISTING_TASKS, resolveInputSchema, validModelPath } from './listing.ts';
import type { ListedModel, ProviderListing, SyncTask } from './listing.ts';

/**
 * fal's platform API (docs/providers.md, "Syncing the catalog"; https://docs.fal.ai/platform-apis):
 * - `GET /models?category=…&status=active&limit=…&cursor=…&expand=openapi-3.0` →
 *   `{models: [{endpoint_id, metadata: {display_name, category, description, status}, openapi}], next_cursor, has_more}`;
 * - `GET /models/pricing?endpoint_id=a&endpoint_id=b…` (1 to 50 ids) →
 *   `{prices: [{endpoint_id, unit_price, unit, currency}], next_cursor, has_more}`.
 * Auth is `Authorization: Key …`. The base is https://api.fal.ai/v1 (`CLIPDESK_FAL_PLATFORM_URL`).
 */
export const FAL_PLATFORM_URL = 'https://api.fal.ai/v1';
export { FAL_PLATFORM_URL_ENV } from '../../../shared/node/engine-env.ts';

const PAGE_SIZE = 100;
/** A bound on pages per listing, against a cursor that never ends. */
const MAX_PAGES = 200;
/** fal's limit of ids per price query. */
export const PRICE_BATCH = 50;

const Page = z.looseObject({
  models: z.array(z.unknown()).optional(),
  prices: z.array(z.unknown()).optional(),
  next_cursor: z.string().max(1000).nullish(),
  has_more: z.boolean().nullish(),
});
const FalModel = z.looseObject({
  endpoint_id: z.string(),
  metadata: z
    .looseObject({
      display_name: z.string().nullish(),
      category: z.string().nullish(),
      description: z.string().nullish(),
      status: z.string().nullish(),
    })
    .nullish(),
  openapi: z.unknown().optional(),
});
const FalPrice = z.looseObject({
  endpoint_id: z.string(),
  unit_price: z.number().nonnegative().finite(),
  unit: z.string().min(1).max(40),
  currency: z.string().nullish(),
});

export interface FalListingOptions {
  baseUrl: string;
  apiKey: string;
  limits: ListingLimits;
  signal?: AbortSignal;
}

export async function readFalListing(options: FalListingOptions): Promise<ProviderListing> {
  const models: ListedModel[] = [];
  let skipped = 0;
  const seen = new Set<string>();
  for (const [category, task] of Object.entries(LISTING_TASKS)) {
    await eachPage(
      options,
      (cursor) => modelsUrl(options.baseUrl, category, cursor),
      'models',
      (entry) => {
        const model = readModel(entry, task);
        if (!model) skipped += 1;
        else if (!seen.has(model.id)) {
          seen.add(model.id);
          models.push(model);
        }
      },
    );
  }
  const prices = await readPrices(
    options,
    models.map((m) => m.id),
  );
  for (const model of models) {
    const price = prices.get(model.id);
    if (price) model.price = price;
  }
  return { models, skipped, prices: models.filter((m) => m.price).length };
}

function modelsUrl(base: string, category: string, cursor: string | undefined): string {
  const url = new URL(`${base.replace(/\/+$/, '')}/models`);
  url.searchParams.set('category', category);
  url.searchParams.set('status', 'active');
  url.searchParams.set('limit', String(PAGE_SIZE));
  url.searchParams.set('expand', 'openapi-3.0');
  if (cursor) url.searchParams.set('cursor', cursor);
  return url.toString();
}

/** Reads every page of a cursor listing; each entry of `field` goes to `take`. */
async function eachPage(
  options: FalListingOptions,
  urlFor: (cursor: string | undefined) => string,
  field: 'models' | 'prices',
  take: (entry: unknown) => void,
): Promise<void> {
  let cursor: string | undefined;
  const cursors = new Set<string>();
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await fetchListing(
      urlFor(cursor),
      { name: 'fal', apiKey: options.apiKey, authorization: `Key ${options.apiKey}` },
      options.limits,
      options.signal,
    );
    const parsed = Page.safeParse(body);
    if (!parsed.success) throw new ListingError(`fal sent a ${field} page that does not fit its documented shape`);
    for (const entry of parsed.data[field] ?? []) take(entry);
    const next = parsed.data.next_cursor ?? undefined;
    if (!parsed.data.has_more || !next || cursors.has(next)) return;
    cursors.add(next);
    cursor = next;
  }
}

function readModel(entry: unknown, task: SyncTask): ListedModel | undefined {
  const parsed = FalModel.safeParse(entry);
  if (!parsed.success) return undefined;
  const { endpoint_id: id, metadata, openapi } = parsed.data;
  if (!validModelPath(id, { min: 2, max: 8 })) return undefined;
  // Asked for active models only; one marked otherwise is not offered anyway.
  if (metadata?.status && metadata.status !== 'active') return undefined;
  const input = resolveInputSchema(openapi, requestBodySchema(openapi, id));
  if (!input || !input.properties['prompt']) return undefined;
  return {
    provider: 'fal',
    id,
    task,
    name: plainText(metadata?.display_name, 80) || id,
    description: plainText(metadata?.description, 500),
    input,
    page: `https://fal.ai/models/${id}`,
  };
}

/** The JSON body schema of the endpoint's POST in its OpenAPI document (the queue's submit). */
function requestBodySchema(openapi: unknown, id: string): unknown {
  const paths = (openapi as { paths?: Record<string, Record<string, unknown>> } | null)?.paths;
  if (!paths || typeof paths !== 'object') return undefined;
  const post = (paths[`/${id}`] ?? Object.values(paths).find((p) => p && typeof p === 'object' && 'post' in p))?.[
    'post'
  ];
  const content = (post as { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined)
    ?.requestBody?.content;
  return content?.['application/json']?.schema;
}

async function readPrices(
  options: FalListingOptions,
  ids: string[],
): Promise<Map<string, { usd: number; unit: string }>> {
  const prices = new Map<string, { usd: number; unit: string }>();
  for (let i = 0; i < ids.length; i += PRICE_BATCH) {
    const batch = ids.slice(i, i + PRICE_BATCH);
    await eachPage(
      options,
      (cursor) => {
        const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/models/pricing`);
        for (const id of batch) url.searchParams.append('endpoint_id', id);
        if (cursor) url.searchParams.set('cursor', cursor);
        return url.toString();
      },
      'prices',
      (entry) => {
        const parsed = FalPrice.safeParse(entry);
        if (!parsed.success || !batch.includes(parsed.data.endpoint_id)) return;
        // Prices in another currency are not comparable with the catalog's USD.
        if (parsed.data.currency && parsed.data.currency.toUpperCase() !== 'USD') return;
        prices.set(parsed.data.endpoint_id, { usd: parsed.data.unit_price, unit: parsed.data.unit });
      },
    );
  }
  return prices;
}

/** Where a fal price was read: the API's own address for the endpoint. */
export function falPriceSource(baseUrl: string, endpointId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/models/pricing?endpoint_id=${encodeURIComponent(endpointId)}`;
}
