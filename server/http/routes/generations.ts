import { buffer } from 'node:stream/consumers';
import type { GeneratedItem, GenerationAccepted, GenerationResponse } from '../../../shared/api/index.ts';
import { IDEMPOTENCY_HEADER } from '../../../shared/api/index.ts';
import type { ServiceContext } from '../../context.ts';
import { checkWebhookField, planFor, startAsyncGeneration } from '../../generation/async-generation.ts';
import { runGeneration } from '../../generation/generate.ts';
import { normalizeUrlFields } from '../../generation/url-fields.ts';
import { followKeyedGeneration, runQueuedSynchronously } from '../../generation/sync-generation.ts';
import type { GenerationOperation } from '../../storage/generations.ts';
import { prefersAsync } from '../prefer.ts';
import { withIdempotency } from '../../generation/idempotency.ts';
import type { RecordResult } from '../../generation/idempotency.ts';
import type { Commit } from '../../generation/run-options.ts';
import { ApiError } from '../../errors.ts';
import { fileUrls } from '../../generation/urls.ts';
import type { Db } from '../../storage/db.ts';
import { getMedia, storedFiles, toGeneratedItem } from '../../storage/media-repo.ts';
import { mediaKey } from '../../storage/layout.ts';
import { readJsonBody } from '../body.ts';
import type { RequestContext, Route } from '../router.ts';
import { json } from '../router.ts';

async function generation(rc: RequestContext, endpoint: string, operation: GenerationOperation) {
  const auth = rc.auth;
  if (!auth) throw new Error('generation route without authentication');
  // URL fields in the form the service uses, from here on: stored, shown and fingerprinted so.
  const raw = normalizeUrlFields(await readJsonBody(rc.req));
  const header = rc.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  const key = Array.isArray(header) ? header[0] : header;
  // RFC 7240: the request prefers not to wait; answered 202 with where to poll.
  if (prefersAsync(rc.req.headers['prefer'])) {
    const { generation: accepted, replayed } = await startAsyncGeneration(rc.ctx, auth, operation, raw, key);
    json(rc, 202, { success: true, result: accepted } satisfies GenerationAccepted, {
      location: `${rc.ctx.origin()}/v1/generations/${accepted.id}`,
      'preference-applied': 'respond-async',
      ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
    });
    return;
  }
  await checkWebhookField(rc.ctx, raw);
  // A client that hangs up before its answer has canceled (docs/workflows.md): the render stops and nothing
  // is stored or charged. (Asynchronous mode is the way to let a generation outlive its request.)
  const hangUp = new AbortController();
  const onClose = () => {
    if (!rc.res.writableFinished) hangUp.abort();
  };
  rc.res.once('close', onClose);
  try {
    const queue = rc.ctx.generationQueue;
    if (queue) {
      // PostgreSQL: a row and a job of the queue, which any node may run (sync-generation.ts).
      const { body, replayed } = await runQueuedSynchronously(
        rc.ctx,
        queue,
        auth,
        { operation, endpoint, raw, key },
        hangUp.signal,
      );
      await answer(rc, endpoint, raw, auth.user, body, replayed);
      return;
    }
    let followed = false;
    const { body, replayed } = await withIdempotency<GenerationResponse>(
      rc.ctx,
      auth,
      endpoint,
      key,
      raw,
      async (record) => {
        // One key space: an asynchronous generation with this key is this request's (its result).
        // Looked for once this request is registered as running, so a repeat in either mode sees it.
        const earlier = record
          ? await followKeyedGeneration(rc.ctx, auth, { key: record.key, operation, raw }, hangUp.signal)
          : undefined;
        if (earlier) {
          followed = true;
          return earlier;
        }
        const planned = await planFor(rc.ctx, auth, operation, raw);
        return await rc.ctx.track(
          runGeneration(rc.ctx, auth, planned, refusedOnceGone(record, hangUp.signal), {
            signal: AbortSignal.any([rc.ctx.shutdown, hangUp.signal]),
            // Planned a moment ago, and a synchronous request never waits for its slot (429).
            healthReadForPlan: true,
          }),
        );
      },
    );
    await answer(rc, endpoint, raw, auth.user, body, replayed || followed);
  } finally {
    rc.res.off('close', onClose);
  }
}

/**
 * The commit of a synchronous generation, checked inside the transaction that stores its items and
 * charge: a client gone by then gets nothing stored and is charged nothing.
 */
function refusedOnceGone(record: RecordResult<GenerationResponse> | undefined, gone: AbortSignal): Commit {
  const refuse = () => {
    if (gone.aborted) throw new ApiError('invalid_request_error', 'the client hung up: the generation was canceled');
  };
  if (!record) return () => Promise.resolve().then(refuse);
  return Object.assign(
    async (body: GenerationResponse, tx: Db) => {
      refuse();
      await record(body, tx);
    },
    { key: record.key, fingerprint: record.fingerprint },
  );
}

async function answer(
  rc: RequestContext,
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
