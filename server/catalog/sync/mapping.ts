import { z } from 'zod';
import { parseModelId } from '../../../shared/api/index.ts';
import type { SyncedProvider } from '../../../shared/api/index.ts';
import table from '../../providers/catalog-file/provider-models.json' with { type: 'json' };
import { SYNC_TASKS } from './listing.ts';
import type { ListedModel } from './listing.ts';

/**
 * The mapping table (server/providers/catalog-file/provider-models.json; docs/providers.md, "Syncing
 * the catalog"): which catalog model a provider's listed model is, so that one model offered by
 * fal and by Replicate is one model with two offers, and fal's separate text-to-video and
 * image-to-video endpoints are one offer. A listed model the table does not name is a model of
 * its own (catalogIdFor).
 */
const ModelId = z.string().refine((id) => {
  const parsed = parseModelId(id);
  return parsed.ok && parsed.id.version === null && id === id.toLowerCase();
}, 'must be a lower-case model id <base>/<model>');

/** A figure kept by hand for a provider whose API publishes no price (Replicate). */
const HandPrice = z.strictObject({
  price: z.number().nonnegative(),
  priceAsOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  priceSource: z.url(),
  /** Why it could not be checked against the provider's API. */
  unverified: z.string().min(1),
});
export type HandPrice = z.infer<typeof HandPrice>;

const Entry = z.strictObject({
  model: ModelId,
  task: z.enum(SYNC_TASKS).optional(),
  name: z.string().min(1).max(80).optional(),
  price: HandPrice.optional(),
});
export type MappingEntry = z.infer<typeof Entry>;

export const ProviderModelMap = z.strictObject({
  $comment: z.string().optional(),
  version: z.literal(1),
  fal: z.record(z.string(), Entry),
  replicate: z.record(z.string(), Entry),
});
export type ProviderModelMap = z.infer<typeof ProviderModelMap>;

/** The built-in table, checked (a bad table is a bug, caught by its unit test). */
export function providerModelMap(): ProviderModelMap {
  return ProviderModelMap.parse(table);
}

export function mappingFor(map: ProviderModelMap, provider: SyncedProvider, id: string): MappingEntry | undefined {
  return Object.hasOwn(map[provider], id) ? map[provider][id] : undefined;
}

/** fal endpoints end in their task; the rest names the model (`fal-ai/veo3/image-to-video` → `fal-ai/veo3`). */
const TASK_SUFFIX = /\/(text-to-video|image-to-video|text-to-image)$/;

/**
 * The catalog id of a listed model: the table's, else the provider's owner/namespace as base and
 * the rest as the model (`fal-ai/kling-video/v2.5-turbo/pro/text-to-video` → `fal-ai/kling-video-v2.5-turbo-pro`).
 */
export function catalogIdFor(map: ProviderModelMap, listed: ListedModel): string | undefined {
  const mapped = mappingFor(map, listed.provider, listed.id);
  if (mapped) return mapped.model;
  const [owner = '', ...rest] = listed.id.replace(TASK_SUFFIX, '').split('/');
  const part = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^[^a-z0-9]+|[-.]+$/g, '');
  const id = `${part(owner)}/${part(rest.join('-'))}`;
  const parsed = parseModelId(id);
  return parsed.ok && parsed.id.version === null ? id : undefined;
}
