import { IDEMPOTENCY_HEADER } from '../../../shared/api/index.ts';
import type { ServiceContext } from '../../context.ts';
import { planImage, planVideo, runGeneration } from '../../media/generate.ts';
import { withIdempotency } from '../../media/idempotency.ts';
import { readJsonBody } from '../body.ts';
import type { RequestContext, Route } from '../router.ts';
import { json } from '../router.ts';

async function generation(
  rc: RequestContext,
  endpoint: string,
  plan: (ctx: ServiceContext, raw: unknown) => ReturnType<typeof planVideo>,
) {
  const auth = rc.auth;
  if (!auth) throw new Error('generation route without authentication');
  const raw = await readJsonBody(rc.req);
  const header = rc.req.headers[IDEMPOTENCY_HEADER.toLowerCase()];
  const key = Array.isArray(header) ? header[0] : header;
  const { body, replayed } = await withIdempotency(rc.ctx, auth, endpoint, key, raw, (record) => {
    const planned = plan(rc.ctx, raw);
    // Not tied to the request: a client that hangs up still gets its item stored.
    return rc.ctx.track(runGeneration(rc.ctx, auth, planned, record));
  });
  json(rc, 200, body, replayed ? { 'idempotent-replayed': 'true' } : {});
}

export const generationRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/videos\/generations$/,
    permission: 'generate',
    handle: (rc) => generation(rc, 'videos', planVideo),
  },
  {
    method: 'POST',
    path: /^\/images\/generations$/,
    permission: 'generate',
    handle: (rc) => generation(rc, 'images', planImage),
  },
];
