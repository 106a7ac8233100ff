import { readFile } from 'node:fs/promises';
import type { GeneratedItem, GenerationAccepted, GenerationResponse } from '../../../shared/api/index.ts';
import { IDEMPOTENCY_HEADER } from '../../../shared/api/index.ts';
import type { ServiceContext } from '../../context.ts';
import { checkWebhookField, planFor, startAsyncGeneration } from '../../media/async-generation.ts';
import { runGeneration } from '../../media/generate.ts';
import type { GenerationOperation } from '../../storage/generations.ts';
import { prefersAsync } from '../prefer.ts';
import { withIdempotency } from '../../media/idempotency.ts';
import { fileUrls } from '../../media/urls.ts';
import { getMedia, storedFiles, toGeneratedItem } from '../../storage/media-repo.ts';
import { readJsonBody } from '../body.ts';
import type { RequestContext, Route } from '../router.ts';
import { json } from '../router.ts';

async function generation(rc: RequestContext, endpoint: string, operation: GenerationOperation) {
  const auth = rc.auth;
  if (!auth) throw new Error('generation route without authentication');
  const raw = await readJsonBody(rc.req);
  const header = rc.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  const key = Array.isArray(header) ? header[0] : header;
  // RFC 7240: the request prefers not to wait; answered 202 with where to poll.
  if (prefersAsync(rc.req.headers['prefer'])) {
    const { generation: accepted, replayed } = await startAsyncGeneration(rc.ctx, auth, operation, raw, key);
    json(rc, 202, { success: true, data: accepted } satisfies GenerationAccepted, {
      location: `${rc.ctx.origin()}/v1/generations/${accepted.id}`,
      'preference-applied': 'respond-async',
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    return;
  }
  await checkWebhookField(rc.ctx, raw);
  const { body, replayed } = await withIdempotency<GenerationResponse>(rc.ctx, auth, endpoint, key, raw, (record) => {
    const planned = planFor(rc.ctx, auth, operation, raw);
    // Not tied to the request: a client that hangs up still gets its item stored.
    return rc.ctx.track(runGeneration(rc.ctx, auth, planned, record));
  });
  // A replay answers with the items as they are now (fresh file URLs), where they still exist.
  let answer = replayed ? current(rc.ctx, auth.user, body) : body;
  // Validated by planImage; the video endpoint has no response_format.
  if (endpoint === 'images' && (raw as { response_format?: unknown }).response_format === 'b64_json') {
    answer = { ...answer, data: await Promise.all(answer.data.map((item) => withBase64(rc.ctx, item))) };
  }
  json(rc, 200, answer, replayed ? { 'idempotent-replayed': 'true' } : {});
}

function current(ctx: ServiceContext, viewer: string, body: GenerationResponse): GenerationResponse {
  const urls = fileUrls(ctx, viewer);
  return {
    ...body,
    data: body.data.map((item) => {
      const row = getMedia(ctx.db, item.id);
      return row ? toGeneratedItem(row, urls) : item;
    }),
  };
}

/**
 * OpenAI's `b64_json`: the image's bytes (its primary file), base64, beside its URL. An item a
 * replay finds deleted since (retention) has no bytes left to send.
 */
async function withBase64(ctx: ServiceContext, item: GeneratedItem): Promise<GeneratedItem> {
  const row = getMedia(ctx.db, item.id);
  const file = row ? storedFiles(row)[0] : undefined;
  if (!row || !file) return item;
  const bytes = await readFile(ctx.layout.mediaPath(row.id, file.name));
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
