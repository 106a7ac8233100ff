import listings from './fixtures/model-listings.json' with { type: 'json' };

/**
 * The models the listing fakes publish (fixtures/model-listings.json): published model ids with
 * their input schemas and fal's prices, wrapped here in the shapes each API documents — fal's
 * OpenAPI 3.0 document per endpoint (`expand=openapi-3.0`), Replicate's model objects whose
 * `latest_version.openapi_schema` holds the `Input` schema, its enums as `allOf: [{$ref}]`.
 */
type Schema = { properties: Record<string, unknown>; required: string[]; enums?: Record<string, unknown> };
interface FalEntry {
  id: string;
  category: string;
  name: string;
  schema: string;
  price?: [number, string];
  status?: string;
  oversizedDescription?: boolean;
  description?: string;
}

const schemas = listings.schemas as unknown as Record<string, Schema>;
export const FAL_LISTING = listings.fal as unknown as FalEntry[];
export const REPLICATE_COLLECTIONS = listings.replicate as unknown as Record<
  string,
  Array<{ id: string; description: string; schema: string }>
>;

/** 40 KB of text with markup and control characters: a listing's text is untrusted. */
const OVERSIZED = `<b>Bold</b> claims\u0007 ${'A very long description of a video model. '.repeat(1000)}`;

function inputSchema(name: string, task: string): { properties: Record<string, unknown>; required: string[] } {
  const schema = schemas[name];
  if (!schema) throw new Error(`no schema ${name} in the listing fixtures`);
  const properties = { ...schema.properties };
  const required = [...schema.required];
  // fal's image-to-video endpoints take the start frame as a required image_url.
  if (task === 'image-to-video' && !name.startsWith('r-')) {
    properties['image_url'] = {
      type: 'string',
      format: 'uri',
      title: 'Image Url',
      description: 'URL of the start frame',
    };
    required.push('image_url');
  }
  return { properties, required };
}

/** One fal model as `GET /v1/models?expand=openapi-3.0` answers it. */
export function falModel(entry: FalEntry): Record<string, unknown> {
  const inputName = `${entry.id.replace(/[^A-Za-z0-9]+/g, '_')}_Input`;
  const input = { type: 'object', title: 'Input', ...inputSchema(entry.schema, entry.category) };
  return {
    endpoint_id: entry.id,
    metadata: {
      display_name: entry.name,
      category: entry.category,
      description: entry.oversizedDescription ? OVERSIZED : (entry.description ?? `${entry.name} on fal.`),
      status: entry.status ?? 'active',
      tags: [],
      updated_at: '2026-11-20T10:00:00Z',
      is_favorited: null,
      thumbnail_url: `https://fal.media/files/thumbnails/${encodeURIComponent(entry.id)}.webp`,
      model_url: `https://fal.run/${entry.id}`,
      date: '2025-06-01T00:00:00Z',
      highlighted: false,
      pinned: false,
    },
    openapi: {
      openapi: '3.0.4',
      info: { title: 'Queue OpenAPI for ' + entry.id, version: '1.0.0', 'x-fal-metadata': { endpointId: entry.id } },
      paths: {
        [`/${entry.id}`]: {
          post: {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: { $ref: `#/components/schemas/${inputName}` } } },
            },
            responses: { '200': { description: 'The request status.' } },
          },
        },
        [`/${entry.id}/requests/{request_id}/status`]: { get: { responses: { '200': { description: 'ok' } } } },
      },
      components: {
        schemas: {
          [inputName]: input,
          ImageSize: {
            type: 'object',
            properties: {
              width: { type: 'integer', maximum: 14142, default: 512, exclusiveMinimum: 0 },
              height: { type: 'integer', maximum: 14142, default: 512, exclusiveMinimum: 0 },
            },
          },
        },
      },
    },
  };
}

/** One Replicate model object as `GET /v1/collections/{slug}` lists it. */
export function replicateModel(entry: { id: string; description: string; schema: string }): Record<string, unknown> {
  const [owner, name] = entry.id.split('/');
  const schema = schemas[entry.schema];
  if (!schema) throw new Error(`no schema ${entry.schema} in the listing fixtures`);
  return {
    url: `https://replicate.com/${entry.id}`,
    owner,
    name,
    description: entry.description,
    visibility: 'public',
    github_url: null,
    paper_url: null,
    license_url: null,
    run_count: 123456,
    cover_image_url: `https://tjzk.replicate.delivery/models_models_cover_image/${name}.webp`,
    default_example: null,
    latest_version: {
      id: createVersionId(entry.id),
      created_at: '2025-07-01T12:00:00.000000Z',
      cog_version: '0.15.9',
      openapi_schema: {
        openapi: '3.0.2',
        info: { title: 'Cog', version: '0.1.0' },
        paths: {},
        components: {
          schemas: {
            Input: { type: 'object', title: 'Input', properties: schema.properties, required: schema.required },
            Output: { type: 'string', title: 'Output', format: 'uri' },
            ...(schema.enums ?? {}),
          },
        },
      },
    },
  };
}

function createVersionId(id: string): string {
  let hash = 0n;
  for (const c of id) hash = (hash * 131n + BigInt(c.charCodeAt(0))) % 2n ** 256n;
  return hash.toString(16).padStart(64, '0').slice(-64);
}
