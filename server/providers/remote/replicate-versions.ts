import type Replicate from 'replicate';

/**
 * Input names that differ between a Replicate model's versions, read from the version itself
 * (docs/providers.md, "Request schemas"). Luma's Ray 2 versions name the start frame
 * `start_image_url` and, from a later version on, `start_image` (keeping the old name as
 * deprecated): the adapter asks `GET /v1/models/{owner}/{name}` which names the latest version's
 * Input schema has, rather than guess.
 */

/** Models whose start frame field changed between versions, the current name first. */
const START_IMAGE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'luma/ray-2-720p': ['start_image', 'start_image_url'],
};

/** A version's names are read again after this long: a model may publish a new version. */
const TTL_MS = 60 * 60 * 1000;

const cache = new Map<string, { field: string; until: number }>();

/**
 * The start frame's field name for `path`'s latest version, or undefined for a model whose
 * builder names it itself. When the model cannot be read, the current name is used.
 */
export async function startImageField(
  replicate: Replicate,
  baseUrl: string,
  path: string,
  signal: AbortSignal,
  now = Date.now(),
): Promise<string | undefined> {
  const candidates = START_IMAGE_FIELDS[path];
  if (!candidates) return undefined;
  const slot = `${baseUrl}\n${path}`;
  const cached = cache.get(slot);
  if (cached && cached.until > now) return cached.field;
  const [owner = '', name = ''] = path.split('/');
  let properties: Record<string, unknown> = {};
  try {
    const model: unknown = await replicate.models.get(owner, name, { signal });
    properties = inputProperties(model);
  } catch {
    // The model's page could not be read: the current name, and no cache, so the next job asks again.
    return candidates[0];
  }
  const field = candidates.find((c) => Object.hasOwn(properties, c)) ?? candidates[0]!;
  cache.set(slot, { field, until: now + TTL_MS });
  return field;
}

function inputProperties(model: unknown): Record<string, unknown> {
  const input = (
    model as {
      latest_version?: { openapi_schema?: { components?: { schemas?: { Input?: { properties?: unknown } } } } };
    }
  )?.latest_version?.openapi_schema?.components?.schemas?.Input?.properties;
  return input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
}

/** Forget what was read (tests). */
export function forgetVersions(): void {
  cache.clear();
}
