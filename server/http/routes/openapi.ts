import {
  CONTENT_LIMITS,
  ERROR_STATUS,
  GenerationListQuery,
  MediaListQuery,
  PageQuery,
  TIERS,
  WEBHOOK_URL_MAX_CHARS,
  WebhookDeliveryListQuery,
} from '../../../shared/api/index.ts';
import type { ErrorCode } from '../../../shared/api/index.ts';
import type { ApiComponentName } from '../../../shared/api/openapi.ts';
import { apiComponentSchemas, componentRef, queryParameters } from '../../../shared/api/openapi.ts';
import { OPTIMAL_ALLOWANCE } from '../../routing/route.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/**
 * `GET /v1/openapi.json`: the paths of the interface around component schemas generated from the
 * zod schemas of `shared/api`. Every extension of docs/api.md is marked `x-extension`, so a client knows
 * what to feature-detect against another implementation.
 */
const ref = (name: ApiComponentName) => ({ $ref: componentRef(name) });
const errors = (...codes: ErrorCode[]) =>
  Object.fromEntries(
    codes.map((code) => [
      String(ERROR_STATUS[code]),
      { description: code, content: { 'application/json': { schema: ref('Error') } } },
    ]),
  );
const ok = (name: ApiComponentName, description = 'OK') => ({
  '200': { description, content: { 'application/json': { schema: ref(name) } } },
});
const body = (name: ApiComponentName) => ({ required: true, content: { 'application/json': { schema: ref(name) } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  schema: { type: 'string' },
  'x-extension': true,
  description: 'A repeat returns the first result and is charged once, also after a crash.',
};
const prefer = {
  name: 'Prefer',
  in: 'header',
  schema: { type: 'string' },
  'x-extension': true,
  description:
    'RFC 7240. `respond-async`: answered 202 (GenerationAccepted) with `Location: {base_url}/generations/{id}` at ' +
    'once; the generation runs in the background (poll GET /generations/{id}, or give `webhook_url`). Other ' +
    'preferences are ignored; without it the request waits for the result as usual.',
};
const accepted = {
  '202': {
    description: 'Prefer: respond-async: the generation is queued',
    headers: {
      Location: { schema: { type: 'string' }, description: '{base_url}/generations/{id}' },
      'Preference-Applied': { schema: { type: 'string', const: 'respond-async' } },
    },
    content: { 'application/json': { schema: ref('GenerationAccepted') } },
  },
};
const authErrors = errors('authentication_error', 'permission_error', 'rate_limit_exceeded');
const generationErrors = errors(
  'invalid_request_error',
  'not_found_error',
  'payload_too_large',
  'unsupported_parameter',
  'provider_unavailable',
);
const fileResponses = {
  '200': { description: 'the file' },
  '206': { description: 'a Range of it' },
  '416': { description: 'range not satisfiable', content: { 'application/json': { schema: ref('Error') } } },
};

function paths(): Record<string, unknown> {
  return {
    ...mediaPaths(),
    ...generationPaths(),
    ...accountPaths(),
  };
}

/** Media items, uploads and files. */
function mediaPaths(): Record<string, unknown> {
  return {
    '/media': {
      get: {
        summary: 'List and search media items (own items, and other users’ public ones)',
        parameters: queryParameters(MediaListQuery),
        responses: { ...ok('MediaList'), ...errors('invalid_request_error'), ...authErrors },
      },
    },
    '/media/{id}': {
      parameters: [idParam],
      get: {
        'x-extension': true,
        summary: 'One media item (own or public), its file URLs signed anew',
        responses: { ...ok('MediaItemResponse'), ...errors('not_found_error'), ...authErrors },
      },
      post: {
        summary: 'Complete an upload (id from POST /media/upload); the file must decode',
        responses: {
          ...ok('UploadCompleteResponse'),
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
        responses: { ...fileResponses, ...errors('not_found_error'), ...authErrors },
      },
    },
    '/media/{id}/retain': {
      'x-extension': true,
      parameters: [idParam],
      post: {
        summary: 'Extend retention by days, or keep for good (owner only)',
        requestBody: body('RetainRequest'),
        responses: {
          ...ok('MediaItemResponse'),
          ...errors('invalid_request_error', 'not_found_error'),
          ...authErrors,
        },
      },
    },
    '/media/upload': {
      post: {
        summary: `A signed, expiring PUT URL bound to the declared size (images ≤ ${CONTENT_LIMITS.uploadImageBytes} bytes, videos ≤ ${CONTENT_LIMITS.uploadVideoBytes} bytes); content is sniffed`,
        requestBody: body('UploadRequest'),
        responses: {
          ...ok('UploadTicketResponse'),
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
          ...errors(
            'permission_error',
            'conflict',
            'payload_too_large',
            'unsupported_media_type',
            'invalid_request_error',
          ),
        },
      },
    },
    '/files/{id}/{name}': {
      'x-extension': true,
      get: {
        security: [],
        summary:
          'Stored files (the URLs in media items), Range supported. A private item’s URLs expire (`expires`, ' +
          'Unix seconds; the item’s `urlExpiresAt`): 403 permission_error after that, and GET /media/{id} returns ' +
          'fresh ones. Public items’ URLs do not expire. A URL issued to the owner carries `owner=1`; a 200 that sent ' +
          'its whole body marks the item downloaded (exempt from retention). Range responses never do.',
        responses: { ...fileResponses, ...errors('permission_error', 'not_found_error') },
      },
    },
  };
}

/** Generations, variations and the routing preview. */
function generationPaths(): Record<string, unknown> {
  return {
    '/videos/generations': {
      post: {
        summary: 'Generate a video: provider → MP4/H.264 + WebM/VP9 → thumbnail → store → URL',
        parameters: [idempotencyKey, prefer],
        requestBody: body('VideoRequest'),
        responses: { ...ok('Generation'), ...accepted, ...generationErrors, ...authErrors },
      },
    },
    '/videos/variations': {
      'x-extension': true,
      post: {
        summary:
          'n (1–4) new videos from one of the caller’s own: same model, version, size and prompt unless given, new ' +
          'seeds, the source’s first frame as start image where the model takes one; each item records `variationOf`',
        parameters: [idempotencyKey, prefer],
        requestBody: body('VariationRequest'),
        responses: { ...ok('Generation'), ...accepted, ...generationErrors, ...authErrors },
      },
    },
    '/routing/preview': {
      'x-extension': true,
      post: {
        summary:
          'What a generation body (video or image; the model says which) would get under each routing mode: the ' +
          'provider tried first, its price, the parameters it drops and why, or the error the submit would get. ' +
          'Computed by the routing the generation runs; nothing is rendered, fetched or charged, and only the ' +
          'rate limit counts it. A body that is wrong whatever the mode gets the generation’s 400/404',
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { oneOf: [ref('VideoRequest'), ref('ImageRequest')] } },
          },
        },
        responses: {
          ...ok('RoutingPreview'),
          ...errors('invalid_request_error', 'not_found_error', 'payload_too_large', 'unsupported_parameter'),
          ...authErrors,
        },
      },
    },
    '/generations': {
      'x-extension': true,
      get: {
        summary: 'The caller’s key’s asynchronous generations, newest first (filter by `status`)',
        parameters: queryParameters(GenerationListQuery),
        responses: { ...ok('GenerationList'), ...errors('invalid_request_error'), ...authErrors },
      },
    },
    '/generations/{id}': {
      'x-extension': true,
      parameters: [idParam],
      get: {
        summary:
          'An asynchronous generation: status queued → generating → transcoding → thumbnail → storing → succeeded | ' +
          'failed | canceled, the provider’s queuePosition/progress when reported; on success the synchronous ' +
          'answer’s data, price and stats, on failure the error. Another key’s generation is 404.',
        responses: { ...ok('GenerationRecordResponse'), ...errors('not_found_error'), ...authErrors },
      },
      delete: {
        summary:
          'Cancel: a provider job is canceled at the provider, a local render stops, no items are stored and nothing ' +
          'is charged. A generation already final is returned as it is.',
        responses: { ...ok('GenerationRecordResponse'), ...errors('not_found_error'), ...authErrors },
      },
    },
    '/images/generations': {
      post: {
        summary: 'Generate images; compatible with OpenAI’s images.generate (carries `created`)',
        parameters: [idempotencyKey, prefer],
        requestBody: body('ImageRequest'),
        responses: { ...ok('Generation'), ...accepted, ...generationErrors, ...authErrors },
      },
    },
  };
}

/** The catalog, providers, usage, webhook deliveries and this document. */
function accountPaths(): Record<string, unknown> {
  const pageParams = queryParameters(PageQuery);
  return {
    '/models': {
      get: { summary: 'List models', parameters: pageParams, responses: { ...ok('ModelList'), ...authErrors } },
    },
    '/models/{id}': {
      get: {
        summary: 'One model; id is base/slug[:version] (the slash raw or %2F)',
        parameters: [idParam],
        responses: { ...ok('ModelResponse'), ...errors('not_found_error'), ...authErrors },
      },
    },
    '/providers': {
      get: { summary: 'List providers', parameters: pageParams, responses: { ...ok('ProviderList'), ...authErrors } },
    },
    '/providers/{id}': {
      get: {
        summary: 'One provider by id or slug',
        parameters: [idParam],
        responses: { ...ok('ProviderResponse'), ...errors('not_found_error'), ...authErrors },
      },
    },
    '/usage': {
      get: {
        'x-extension': true,
        summary:
          'Tier limits and current usage (requests per window, running generations, storage, cost per key, ' +
          'with each key’s last 4 characters and its charges per UTC day over the last 62 days)',
        responses: { ...ok('Usage'), ...authErrors },
      },
    },
    '/webhooks/deliveries': {
      'x-extension': true,
      get: {
        summary:
          'The calling key’s webhook deliveries, newest first: state (pending, delivered, failed), attempts, ' +
          'the last attempt’s status or error, and when the next attempt is due',
        parameters: queryParameters(WebhookDeliveryListQuery),
        responses: { ...ok('WebhookDeliveryList'), ...errors('invalid_request_error'), ...authErrors },
      },
    },
    '/openapi.json': {
      get: { security: [], summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1' } } },
    },
  };
}

const webhookHeader = (name: string, description: string) => ({
  name,
  in: 'header',
  required: true,
  schema: { type: 'string' },
  description,
});

/**
 * What the service POSTs to a generation's `webhook_url` when it finishes (OpenAPI 3.1 `webhooks`),
 * following Standard Webhooks.
 */
function webhooks(): Record<string, unknown> {
  return {
    'generation.finished': {
      post: {
        'x-extension': true,
        summary:
          'A generation reached succeeded, failed or canceled (type generation.succeeded|failed|canceled). ' +
          `Sent to the request's webhook_url (http(s), at most ${WEBHOOK_URL_MAX_CHARS} characters; private and ` +
          'loopback addresses only with --allow-private-webhooks). A 2xx answer is a delivery; anything else, ' +
          'a redirect or no answer within 10 s is retried with exponential backoff and jitter for up to 24 h ' +
          '(at least once, the same webhook-id on every retry). GET /webhooks/deliveries shows the attempts.',
        parameters: [
          webhookHeader('webhook-id', 'The delivery id (msg_…), the same on every retry: deduplicate on it.'),
          webhookHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
          webhookHeader(
            'webhook-signature',
            'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"> keyed with the base64-decoded ' +
              'part of the key’s whsec_ secret (clipdesk-service keys create / keys rotate-webhook-secret).',
          ),
        ],
        requestBody: body('WebhookEvent'),
        responses: { '2XX': { description: 'delivered' } },
      },
    },
  };
}

/** Generated once: the schemas do not change while the process runs. */
let componentSchemas: ReturnType<typeof apiComponentSchemas> | null = null;

function openApiDocument(serverUrl: string): Record<string, unknown> {
  componentSchemas ??= apiComponentSchemas();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Media Generation Service (Clipdesk Local engine)',
      version: '1.0.0-beta',
      description:
        'The v1 interface. Local providers are procedural renderers built on ffmpeg, not AI. ' +
        'Successful bodies carry `data` (an array: generations) or `result` (an object: lists and single records); ' +
        'failures carry `{success:false, message, code}` with the status of the code (see the ErrorCode schema). ' +
        'Prices are US dollars (per second of video, per image); stats timings are seconds. ' +
        'Every limit answers 429 rate_limit_exceeded with retry_after (integer seconds). ' +
        'X-RateLimit-Limit/-Remaining/-Reset (Unix seconds) describe the window (minute, hour or day) closest to refusing. ' +
        'Every authenticated request counts against the rate windows except GET /generations/{id}, GET /media/{id}/content ' +
        'and GET /usage, which carry no X-RateLimit headers. ' +
        `Routing: optimal takes the cheapest provider supporting every requested feature, but one with strictly more features wins at ≤ ${Math.round((OPTIMAL_ALLOWANCE - 1) * 100)}% more; ` +
        'cheapest takes the cheapest provider for the model, size and duration; compatible the cheapest honouring every given parameter, else 422. ' +
        'Fields that are not parameters of the model are refused under compatible (422) and listed in stats.ignoredParameters otherwise. ' +
        `Limits per tier: ${JSON.stringify(TIERS)}. Content limits: ${JSON.stringify(CONTENT_LIMITS)} (MB = 10^6 bytes).`,
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths: paths(),
    webhooks: webhooks(),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: componentSchemas,
    },
  };
}

/** The OpenAPI document is public: it describes the interface and holds nothing of anyone's. */
export const openApiRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/openapi\.json$/,
    public: true,
    handle(rc) {
      json(rc, 200, openApiDocument(`${rc.ctx.origin()}/v1`), { 'cache-control': 'public, max-age=300' });
    },
  },
];
