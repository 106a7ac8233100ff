import type { RoutingPreviewResponse } from '../../../shared/api/index.ts';
import { previewRouting } from '../../generation/routing-preview.ts';
import { readJsonBody } from '../body.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/**
 * `POST /routing/preview`: a generation body in, what each routing mode would do with it out.
 * The same key and permission as generating (a preview is part of composing one), counted by the
 * rate limit like any request, but nothing else: no concurrency slot, no storage reservation,
 * no charge, no usage row, and nothing is fetched (server/generation/routing-preview.ts).
 */
export const routingPreviewRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/routing\/preview$/,
    permission: 'generate',
    handle: async (rc) => {
      const raw = await readJsonBody(rc.req);
      // The cooldowns the generation's routing would see (the nodes' shared table, health.ts).
      await rc.ctx.providerHealth.refresh();
      json(rc, 200, { success: true, result: previewRouting(rc.ctx, raw) } satisfies RoutingPreviewResponse);
    },
  },
];
