import { CONTENT_LIMITS, ERROR_STATUS, TIERS } from '../../shared/api/index.ts';
import { OPTIMAL_ALLOWANCE } from '../routing/route.ts';

/**
 * `GET /v1/openapi.json`: the interface, with every DESIGN.md extension marked `x-extension` so a
 * client knows what to feature-detect against another implementation.
 */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errors = (...codes: Array<keyof typeof ERROR_STATUS>) =>
  Object.fromEntries(
    codes.map((code) => [
      String(ERROR_STATUS[code]),
      { description: code, content: { 'application/json': { schema: ref('Error') } } },
    ]),
  );
const ok = (schema: unknown, description = 'OK') => ({
  '200': { description, content: { 'application/json': { schema } } },
});
const pageParams = [
  {
    name: 'limit',
    in: 'query',
    schema: { type: 'integer', minimum: 1, default: 25 },
    description: 'Larger values clamp to 100.',
  },
  { name: 'page', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 }, description: 'Zero-based.' },
];
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const authErrors = errors('authentication_error', 'permission_error', 'rate_limit_exceeded');

export function openApiDocument(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Media Generation Service (Clipdesk Local engine)',
      version: '1.0.0-beta',
      description:
        'The v1 interface. Local providers are procedural renderers built on ffmpeg, not AI. ' +
        'Prices are US dollars (per second of video, per image); stats timings are seconds. ' +
        'Every limit answers 429 rate_limit_exceeded with retry_after (integer seconds). ' +
        'X-RateLimit-Limit/-Remaining/-Reset (Unix seconds) describe the window (minute, hour or day) closest to refusing. ' +
        `Limits per tier: ${JSON.stringify(TIERS)}. Content limits: ${JSON.stringify(CONTENT_LIMITS)} (MB = 10^6 bytes). ` +
        'Video generation has no lower rate limit than the tier table; concurrent generations are limited per kind.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths: {
      '/media': {
        get: {
          summary: 'List and search media items (own items, and other users’ public ones)',
          parameters: [
            ...pageParams,
            { name: 'user', in: 'query', schema: { type: 'string' }, description: "A user id or 'me'." },
            { name: 'media', in: 'query', schema: { enum: ['video', 'image'] } },
            { name: 'size', in: 'query', schema: { type: 'string' } },
            { name: 'model', in: 'query', schema: { type: 'string' }, description: 'base/slug or base/slug:version.' },
            { name: 'provider', in: 'query', schema: { type: 'string' }, description: 'Provider id or slug.' },
            {
              name: 'search',
              in: 'query',
              schema: { type: 'string', maxLength: 500 },
              description: 'Case-insensitive substring of the prompt; no character is syntax.',
            },
            {
              name: 'sort',
              in: 'query',
              schema: { enum: ['newest', 'oldest'], default: 'newest' },
              description: 'Ties broken by insertion order.',
            },
          ],
          responses: { ...ok(ref('MediaList')), ...errors('invalid_request_error'), ...authErrors },
        },
      },
      '/media/{id}': {
        parameters: [idParam],
        get: {
          'x-extension': true,
          summary: 'One media item (own or public)',
          responses: { ...ok(ref('MediaItems')), ...errors('not_found_error'), ...authErrors },
        },
        post: {
          'x-extension': true,
          summary: 'Complete an upload (id from POST /media/upload); the file must decode with ffprobe',
          responses: {
            ...ok(ref('MediaItems')),
            ...errors('not_found_error', 'invalid_request_error', 'unsupported_media_type'),
            ...authErrors,
          },
        },
      },
      '/media/{id}/content': {
        'x-extension': true,
        parameters: [
          idParam,
          { name: 'format', in: 'query', schema: { type: 'string' }, description: 'mp4, webm, png… or a MIME type.' },
        ],
        get: {
          summary: 'Authenticated download (Range supported); the owner’s download exempts the item from retention',
          responses: {
            '200': { description: 'file' },
            '206': { description: 'partial' },
            '416': { description: 'range not satisfiable' },
            ...errors('not_found_error'),
            ...authErrors,
          },
        },
      },
      '/media/{id}/retain': {
        'x-extension': true,
        parameters: [idParam],
        post: {
          summary: 'Extend retention by days, or keep forever (owner only)',
          requestBody: { content: { 'application/json': { schema: ref('RetainRequest') } } },
          responses: { ...ok(ref('MediaItems')), ...errors('invalid_request_error', 'not_found_error'), ...authErrors },
        },
      },
      '/media/upload': {
        'x-extension': true,
        post: {
          summary: `Get a signed, expiring PUT URL bound to the declared size (images ≤ ${CONTENT_LIMITS.uploadImageBytes} bytes, videos ≤ ${CONTENT_LIMITS.uploadVideoBytes} bytes); content is sniffed`,
          requestBody: { content: { 'application/json': { schema: ref('UploadRequest') } } },
          responses: {
            ...ok(ref('UploadTicket')),
            ...errors('invalid_request_error', 'payload_too_large', 'unsupported_media_type'),
            ...authErrors,
          },
        },
      },
      '/uploads/{id}': {
        'x-extension': true,
        parameters: [idParam],
        put: {
          security: [],
          summary: 'The signed upload URL (no bearer key). Body: exactly the declared bytes.',
          responses: {
            '200': { description: 'received' },
            ...errors('permission_error', 'payload_too_large', 'unsupported_media_type', 'invalid_request_error'),
          },
        },
      },
      '/files/{id}/{name}': {
        'x-extension': true,
        get: {
          security: [],
          summary: 'Stored files (the URLs in media items); signed, Range supported, cached for a year',
          responses: {
            '200': { description: 'file' },
            '206': { description: 'partial' },
            '416': { description: 'range not satisfiable' },
            ...errors('not_found_error'),
          },
        },
      },
      '/videos/generations': {
        post: {
          summary: 'Generate a video: provider → MP4/H.264 + WebM/VP9 → thumbnail → store → URL',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              schema: { type: 'string' },
              'x-extension': true,
              description: 'A repeat returns the first result, charged once.',
            },
          ],
          requestBody: { content: { 'application/json': { schema: ref('VideoRequest') } } },
          responses: {
            ...ok(ref('Generation')),
            ...errors(
              'invalid_request_error',
              'not_found_error',
              'payload_too_large',
              'unsupported_parameter',
              'provider_unavailable',
            ),
            ...authErrors,
          },
        },
      },
      '/images/generations': {
        post: {
          summary: 'Generate images; compatible with OpenAI’s images.generate (carries `created`)',
          parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string' }, 'x-extension': true }],
          requestBody: { content: { 'application/json': { schema: ref('ImageRequest') } } },
          responses: {
            ...ok(ref('Generation')),
            ...errors(
              'invalid_request_error',
              'not_found_error',
              'payload_too_large',
              'unsupported_parameter',
              'provider_unavailable',
            ),
            ...authErrors,
          },
        },
      },
      '/models': {
        get: { summary: 'List models', parameters: pageParams, responses: { ...ok(ref('ModelList')), ...authErrors } },
      },
      '/models/{id}': {
        get: {
          summary: 'One model; id is base/slug[:version] (the slash raw or %2F)',
          parameters: [idParam],
          responses: {
            ...ok({ type: 'object', properties: { success: { const: true }, data: ref('Model') } }),
            ...errors('not_found_error'),
            ...authErrors,
          },
        },
      },
      '/providers': {
        get: {
          summary: 'List providers',
          parameters: pageParams,
          responses: { ...ok(ref('ProviderList')), ...authErrors },
        },
      },
      '/providers/{id}': {
        get: {
          summary: 'One provider by id or slug',
          parameters: [idParam],
          responses: {
            ...ok({ type: 'object', properties: { success: { const: true }, data: ref('Provider') } }),
            ...errors('not_found_error'),
            ...authErrors,
          },
        },
      },
      '/usage': {
        get: {
          summary: 'Tier limits and current usage (requests per window, running generations, storage, cost per key)',
          'x-extension': true,
          responses: { ...ok(ref('Usage')), ...authErrors },
        },
      },
      '/openapi.json': {
        get: { security: [], summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['success', 'message', 'code'],
          properties: {
            success: { const: false },
            message: { type: 'string' },
            code: { enum: Object.keys(ERROR_STATUS) },
            retry_after: { type: 'integer', description: 'Only on 429.' },
          },
        },
        MediaItem: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            url: { type: 'string' },
            mime: { type: 'string' },
            user: { type: 'string' },
            media: { enum: ['video', 'image'] },
            model: { type: 'string', description: 'base/model' },
            provider: { type: 'string', description: 'provider id' },
            prompt: { type: 'string' },
            size: { type: 'string' },
            duration: { type: 'number', description: 'seconds' },
            createdAt: { type: 'string', format: 'date-time' },
            modelSlug: { type: 'string', description: 'base/model:version (list only)' },
            providerName: { type: 'string', description: 'list only' },
            thumbnailUrl: { type: 'string', 'x-extension': true },
            formats: {
              type: 'array',
              'x-extension': true,
              items: {
                type: 'object',
                properties: { mime: { type: 'string' }, url: { type: 'string' }, bytes: { type: 'integer' } },
              },
            },
            public: { type: 'boolean', 'x-extension': true },
            expiresAt: {
              type: ['string', 'null'],
              'x-extension': true,
              description: 'null when exempt (downloaded or retained forever)',
            },
            downloadedAt: { type: ['string', 'null'], 'x-extension': true },
            width: { type: 'integer', 'x-extension': true },
            height: { type: 'integer', 'x-extension': true },
            price: { type: 'number', 'x-extension': true },
            bytes: { type: 'integer', 'x-extension': true },
          },
        },
        MediaItems: {
          type: 'object',
          properties: { success: { const: true }, data: { type: 'array', items: ref('MediaItem') } },
        },
        MediaList: {
          type: 'object',
          properties: {
            success: { const: true },
            result: {
              type: 'object',
              properties: { total: { type: 'integer' }, medias: { type: 'array', items: ref('MediaItem') } },
            },
          },
        },
        VideoRequest: {
          type: 'object',
          required: ['model', 'prompt'],
          properties: {
            model: { type: 'string' },
            prompt: { type: 'string', maxLength: CONTENT_LIMITS.promptVideoChars },
            size: { type: 'string', description: "Model's list; default the model's default (1080p)." },
            image_url: {
              type: 'string',
              description: 'Reachable http(s) image, or a file URL of this service (e.g. a completed upload).',
            },
            duration: { type: 'number', description: "Seconds, within the model's range." },
            provider: { type: 'string', description: 'Bypasses routing: 404 unknown, 422 cannot honour, 503 failed.' },
            routing: {
              enum: ['optimal', 'cheapest', 'compatible'],
              default: 'optimal',
              description:
                `optimal: cheapest provider supporting every requested feature, but one with strictly more features wins at ≤ ${Math.round((OPTIMAL_ALLOWANCE - 1) * 100)}% more (when none supports every feature, as cheapest). ` +
                'cheapest: cheapest provider for the model, size and duration; parameters it cannot honour are dropped and listed in stats.ignoredParameters. ' +
                'compatible: cheapest provider honouring every given parameter, else 422. On provider failure the next in the ranking is tried; stats.retries counts failures.',
            },
            public: { type: 'boolean', default: true },
            style: { type: 'string' },
            seed: {
              type: 'integer',
              'x-extension': true,
              description: 'Default derived from the prompt: same inputs, same frames.',
            },
          },
        },
        ImageRequest: {
          type: 'object',
          required: ['model', 'prompt'],
          properties: {
            model: { type: 'string' },
            prompt: { type: 'string', maxLength: CONTENT_LIMITS.promptImageChars },
            size: {
              type: 'string',
              description: `WxH up to ${CONTENT_LIMITS.imageMaxDimension}x${CONTENT_LIMITS.imageMaxDimension}, model dependent.`,
            },
            n: { type: 'integer', minimum: 1, maximum: 4, default: 1 },
            provider: { type: 'string' },
            routing: { enum: ['optimal', 'cheapest', 'compatible'] },
            public: { type: 'boolean' },
            style: { type: 'string' },
            seed: { type: 'integer' },
            response_format: { enum: ['url'] },
          },
        },
        Generation: {
          type: 'object',
          properties: {
            success: { const: true },
            data: { type: 'array', items: ref('MediaItem') },
            price: { type: 'number', description: 'US dollars' },
            created: { type: 'integer', description: 'Unix seconds (OpenAI compatibility)' },
            stats: {
              type: 'object',
              properties: {
                setupTime: { type: 'number', description: 'seconds: validation, routing, fetching image_url' },
                generationTime: { type: 'number', description: 'seconds in providers, failed attempts included' },
                processingTime: { type: 'number', description: 'seconds: transcode, thumbnail, store' },
                retries: { type: 'integer', description: 'failed provider attempts' },
                providerId: { type: 'string' },
                providerSlug: { type: 'string', 'x-extension': true },
                routing: { type: 'string', 'x-extension': true },
                ignoredParameters: { type: 'array', items: { type: 'string' }, 'x-extension': true },
              },
            },
          },
        },
        Model: {
          'x-extension': true,
          type: 'object',
          properties: {
            id: { type: 'string', description: 'base/slug' },
            base: { type: 'string' },
            slug: { type: 'string' },
            name: { type: 'string' },
            version: { type: 'string' },
            versions: {
              type: 'array',
              items: { type: 'string' },
              description: 'oldest first; the last is used when a request omits the version',
            },
            media: { enum: ['video', 'image'] },
            description: { type: 'string' },
            parameters: {
              type: 'object',
              description: 'duration {min,max,default}, size {values,default}, image_url {supported}, style {values}',
            },
            providers: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  slug: { type: 'string' },
                  price: { type: 'number' },
                  priceUnit: { enum: ['second', 'image'] },
                  features: { type: 'array', items: { type: 'string' } },
                  sizes: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
        ModelList: {
          type: 'object',
          properties: {
            success: { const: true },
            result: {
              type: 'object',
              properties: { total: { type: 'integer' }, models: { type: 'array', items: ref('Model') } },
            },
          },
        },
        Provider: {
          'x-extension': true,
          type: 'object',
          properties: {
            id: { type: 'string' },
            slug: { type: 'string' },
            name: { type: 'string' },
            status: { enum: ['available', 'unavailable'] },
            models: { type: 'array', items: { type: 'string' } },
            features: { type: 'array', items: { type: 'string' } },
          },
        },
        ProviderList: {
          type: 'object',
          properties: {
            success: { const: true },
            result: {
              type: 'object',
              properties: { total: { type: 'integer' }, providers: { type: 'array', items: ref('Provider') } },
            },
          },
        },
        UploadRequest: {
          type: 'object',
          required: ['filename', 'mime', 'size'],
          properties: {
            filename: { type: 'string' },
            mime: { type: 'string' },
            size: { type: 'integer', description: 'bytes' },
          },
        },
        UploadTicket: {
          type: 'object',
          properties: {
            success: { const: true },
            data: {
              type: 'object',
              properties: {
                id: { type: 'string' },
                uploadUrl: { type: 'string' },
                method: { const: 'PUT' },
                headers: { type: 'object' },
                expiresAt: { type: 'string' },
              },
            },
          },
        },
        RetainRequest: {
          type: 'object',
          properties: { days: { type: 'integer', minimum: 1, maximum: 3650 }, forever: { type: 'boolean' } },
        },
        Usage: {
          'x-extension': true,
          type: 'object',
          description:
            '{success, result:{tier, limits:{rate, concurrency, storageBytes, retentionDays}, usage:{requests, running, storageBytes, cost:{total, byKey}}}}',
        },
      },
    },
  };
}
