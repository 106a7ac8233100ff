import type { SyncedProvider } from '../../../shared/api/index.ts';

/** The tasks a listed model is for (the catalog's per-task paths). */
export const SYNC_TASKS = ['text_to_video', 'image_to_video', 'text_to_image'] as const;
export type SyncTask = (typeof SYNC_TASKS)[number];

/**
 * The listings' own name of each task: fal's model categories and Replicate's collection slugs
 * are the same three words.
 */
export const LISTING_TASKS: Readonly<Record<string, SyncTask>> = {
  'text-to-video': 'text_to_video',
  'image-to-video': 'image_to_video',
  'text-to-image': 'text_to_image',
};

/** A provider's price for one listed model, as its API said it (fal's `unit_price` and `unit`). */
export interface ListedPrice {
  usd: number;
  unit: string;
}

/** One model (fal: one endpoint) read from a provider's listing, checked and its text cleaned. */
export interface ListedModel {
  provider: SyncedProvider;
  /** fal's endpoint id, or Replicate's `owner/name`. */
  id: string;
  /** The listing it came from: fal's category, or Replicate's collection. */
  task: SyncTask;
  name: string;
  description: string;
  /** The model's input: a JSON schema object (fal's request body, Replicate's `Input`), refs resolved on read. */
  input: InputSchema;
  price?: ListedPrice;
  /** The provider's page of the model, for a price kept by hand. */
  page: string;
}

/** A JSON schema object as listings carry them (only what the sync reads). */
export interface InputSchema {
  properties: Record<string, Record<string, unknown>>;
  required: string[];
}

/** What one provider's listing gave: its models, and how many entries were left out and why. */
export interface ProviderListing {
  models: ListedModel[];
  /** Entries that did not fit the schema, had a bad id or no usable input schema. */
  skipped: number;
  /** Prices read from the provider's price listing. */
  prices: number;
}

/** Ids as providers publish them: lower-case path segments of letters, digits, `.`, `_`, `-`. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function validModelPath(id: string, segments: { min: number; max: number }): boolean {
  const parts = id.split('/');
  return (
    id.length <= 200 &&
    parts.length >= segments.min &&
    parts.length <= segments.max &&
    parts.every((p) => SEGMENT.test(p))
  );
}

/**
 * The object schema a listing gives for a model's input, with `$ref`s into `components.schemas`
 * (and Replicate's `allOf: [{$ref}]` enums) resolved one level; undefined when there is none.
 */
export function resolveInputSchema(root: unknown, schema: unknown): InputSchema | undefined {
  const resolved = deref(root, schema);
  if (!resolved || typeof resolved.properties !== 'object' || resolved.properties === null) return undefined;
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, value] of Object.entries(resolved.properties as Record<string, unknown>).slice(0, 200)) {
    const property = flatten(root, value);
    if (property) properties[name] = property;
  }
  const required = Array.isArray(resolved.required)
    ? resolved.required.filter((r): r is string => typeof r === 'string')
    : [];
  return { properties, required };
}

function deref(root: unknown, schema: unknown): Record<string, unknown> | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref !== 'string') return schema as Record<string, unknown>;
  const match = /^#\/components\/schemas\/([^/]+)$/.exec(ref);
  const schemas = (root as { components?: { schemas?: Record<string, unknown> } } | null)?.components?.schemas;
  const target = match && schemas ? schemas[match[1]!] : undefined;
  return target && typeof target === 'object' ? (target as Record<string, unknown>) : undefined;
}

/** A property with its `$ref`, `allOf: [{$ref}]` or `anyOf: [X, {type: null}]` folded into it. */
function flatten(root: unknown, value: unknown): Record<string, unknown> | undefined {
  const property = deref(root, value);
  if (!property) return undefined;
  let out: Record<string, unknown> = { ...property };
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = property[key];
    if (!Array.isArray(list)) continue;
    const concrete = list.map((item) => deref(root, item)).filter((item) => item && item['type'] !== 'null');
    if (concrete.length === 1) {
      const { [key]: _dropped, ...rest } = out;
      out = { ...concrete[0], ...rest };
    }
  }
  return out;
}
