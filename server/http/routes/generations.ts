import { buffer } from 'node:stream/consumers';
import type { GeneratedItem, GenerationAccepted, GenerationResponse } from '../../../shared/api/index.ts';
import { IDEMPOTENCY_HEADER } from '../../../shared/api/index.ts';
import type { ServiceContext } from '../../context.ts';
import { normalizeUrlFields } from '../../generation/url-fields.ts';
import type { GenerationOperation } from '../../storage/generations.ts';
import { prefersAsync } from '../prefer.ts';
import { fileUrls } from '../../generation/urls.ts';
import { getMedia, storedFiles, toGeneratedItem } from '../../storage/media-repo.ts';
import { mediaKey } from '../../storage/layout.ts';
import { readJsonBody } from '../body.ts';
import type { AuthenticatedRequest, Route } from '../router.ts';
import { json } from '../router.ts';

async function generation(rc: AuthenticatedRequest, endpoint: string, operation: GenerationOperation) {
  const auth = rc.auth;
  // URL fields in the form the service uses, from here on: stored, shown and fingerprinted so.
  const raw = normalizeUrlFields(await readJsonBody(rc.req));
  const header = rc.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  const key = Array.isArray(header) ? header[0] : header;
  // RFC 7240: the request prefers not to wait; answered 202 with where to poll.
  if (prefersAsync(rc.req.headers['prefer'])) {
    const { generation: accepted, replayed } = await rc.ctx.generations.accept(auth, operation, raw, key);
    json(rc, 202, { success: true, result: accepted } satisfies GenerationAccepted, {
      location: `${rc.ctx.origin()}/v1/generations/${accepted.id}`,
      'preference-applied': 'respond-async',
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    return;
  }
  await rc.ctx.generations.checkWebhookField(raw);
  // A client that hangs up before its answer has canceled (docs/workflows.md): the render stops and nothing
  // is stored or charged. (Asynchronous mode is the way to let a generation outlive its request.)
  const hangUp = new AbortController();
  const onClose = () => {
    if (!rc.res.writableFinished) hangUp.abort();
  };
  rc.res.once('close', onClose);
  try {
    // In this request (one node), or through the queue any node works (several): the strategy the
    // service's Generations object was built with (server/generation/runners.ts).
    const { body, replayed } = await rc.ctx.generations.run(auth, { operation, endpoint, raw, key }, hangUp.signal);
    await answer(rc, endpoint, raw, auth.user, body, replayed);
  } finally {
    rc.res.off('close', onClose);
  }
}

async function answer(
  rc: AuthenticatedRequest,
  endpoint: string,
  raw: unknown,
  user: string,
  body: GenerationResponse,
  replayed: boolean,
): Promise<void> {
  // A replay answers with the items as they are now (fresh file URLs), where they still exist.
  let out = replayed ? await current(rc.ctx, user, body) : body;
  // Validated by planImage; the video endpoint has no response_format.
  if (endpoint === 'images' && (raw as { response_format?: unknown }).response_format === 'b64_json') {
    out = { ...out, data: await Promise.all(out.data.map((item) => withBase64(rc.ctx, item))) };
  }
  json(rc, 200, out, replayed ? { 'idempotent-replayed': 'true' } : {});
}

async function current(ctx: ServiceContext, viewer: string, body: GenerationResponse): Promise<GenerationResponse> {
  const urls = fileUrls(ctx, viewer);
  const data: GeneratedItem[] = [];
  for (const item of body.data) {
    const row = await getMedia(ctx.db, item.id);
    data.push(row ? toGeneratedItem(row, urls) : item);
  }
  return { ...body, data };
}

/**
 * OpenAI's `b64_json`: the image's bytes (its primary file), base64, beside its URL. An item a
 * replay finds deleted since (retention) has no bytes left to send.
 */
async function withBase64(ctx: ServiceContext, item: GeneratedItem): Promise<GeneratedItem> {
  const row = await getMedia(ctx.db, item.id);
  const file = row ? storedFiles(row)[0] : undefined;
  if (!row || !file) return item;
  const bytes = await buffer((await ctx.blobs.get(mediaKey(row.id, file.name))).stream);
  return { ...item, b64_json: bytes.toString('base64') };
}

export const generationRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/videos\/generations$/,
    permission: 'generate',
    handle: (rc) => generation(rc, 'videos', 'videos.generations'),
  },
  {
    method: 'POST',
    path: /^\/images\/generations$/,
    permission: 'generate',
    handle: (rc) => generation(rc, 'images', 'images.generations'),
  },
  {
    method: 'POST',
    path: /^\/videos\/variations$/,
    permission: 'generate',
    handle: (rc) => generation(rc, 'videos.variations', 'videos.variations'),
  },
];
