import { z } from 'zod';
import { fetchListing, ListingError, plainText } from './fetch-json.ts';
import type { ListingLimits } from './fetch-json.ts';
import { LISTING_TASKS, resolveInputSchema, validModelPath } from './listing.ts';
import type { ListedModel, ProviderListing, SyncTask } from './listing.ts';

/**
 * Replicate's collections (docs/providers.md, "Syncing the catalog";
 * https://replicate.com/docs/reference/http#collections.get): `GET /collections/{slug}` →
 * `{name, slug, description, models: [{owner, name, description, latest_version: {id, openapi_schema}}]}`,
 * its models' input schema at `latest_version.openapi_schema.components.schemas.Input`. Auth is
 * `Authorization: Bearer …`; the base is https://api.replicate.com/v1 (`CLIPDESK_REPLICATE_BASE_URL`).
 * A `next` link, should a collection page, is followed on the same origin.
 * Replicate's API publishes no prices.
 */
export const REPLICATE_API_URL = 'https://api.replicate.com/v1';

const MAX_PAGES = 50;

const Collection = z.looseObject({
  models: z.array(z.unknown()).optional(),
  results: z.array(z.unknown()).optional(),
  next: z.string().max(2000).nullish(),
});
const ReplicateModel = z.looseObject({
  owner: z.string(),
  name: z.string(),
  description: z.string().nullish(),
  latest_version: z.looseObject({ id: z.string().nullish(), openapi_schema: z.unknown().optional() }).nullish(),
});

export interface ReplicateListingOptions {
  baseUrl: string;
  apiKey: string;
  limits: ListingLimits;
  signal?: AbortSignal;
}

export async function readReplicateListing(options: ReplicateListingOptions): Promise<ProviderListing> {
  const models: ListedModel[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  const base = options.baseUrl.replace(/\/+$/, '');
  for (const [slug, task] of Object.entries(LISTING_TASKS)) {
    let url: string | undefined = `${base}/collections/${slug}`;
    for (let page = 0; url && page < MAX_PAGES; page++) {
      const body = await fetchListing(
        url,
        { name: 'Replicate', apiKey: options.apiKey, authorization: `Bearer ${options.apiKey}` },
        options.limits,
        options.signal,
      );
      const parsed = Collection.safeParse(body);
      if (!parsed.success) throw new ListingError(`Replicate sent a collection that does not fit its documented shape`);
      for (const entry of parsed.data.models ?? parsed.data.results ?? []) {
        const model = readModel(entry, task);
        if (!model) skipped += 1;
        else if (!seen.has(model.id)) {
          seen.add(model.id);
          models.push(model);
        }
      }
      url = sameOrigin(parsed.data.next ?? undefined, base);
    }
  }
  return { models, skipped, prices: 0 };
}

function sameOrigin(next: string | undefined, base: string): string | undefined {
  if (!next) return undefined;
  try {
    const url = new URL(next, base);
    return url.origin === new URL(base).origin ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

function readModel(entry: unknown, task: SyncTask): ListedModel | undefined {
  const parsed = ReplicateModel.safeParse(entry);
  if (!parsed.success) return undefined;
  const id = `${parsed.data.owner}/${parsed.data.name}`.toLowerCase();
  if (!validModelPath(id, { min: 2, max: 2 })) return undefined;
  const schema = parsed.data.latest_version?.openapi_schema;
  const inputRef = (schema as { components?: { schemas?: { Input?: unknown } } } | undefined)?.components?.schemas
    ?.Input;
  const input = resolveInputSchema(schema, inputRef);
  if (!input || !input.properties['prompt']) return undefined;
  return {
    provider: 'replicate',
    id,
    task,
    name: plainText(parsed.data.name, 80),
    description: plainText(parsed.data.description, 500),
    input,
    page: `https://replicate.com/${id}`,
  };
}
