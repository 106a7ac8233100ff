import { WebhookDeliveryListQuery } from '../../../shared/api/index.ts';
import { parseOrThrow } from '../../errors.ts';
import { listDeliveries } from '../../webhooks/deliveries.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/**
 * `GET /webhooks/deliveries`: the calling key's webhook deliveries, newest first, paginated like
 * the other lists (`limit`, `page`), optionally of one `state`. Each key sees only its own: the
 * target URLs are the key holder's, and so are the events.
 */
export const webhookRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/webhooks\/deliveries$/,
    permission: 'read',
    async handle(rc) {
      const auth = rc.auth;
      const q = parseOrThrow(WebhookDeliveryListQuery, {
        limit: rc.url.searchParams.get('limit') ?? undefined,
        page: rc.url.searchParams.get('page') ?? undefined,
        state: rc.url.searchParams.get('state') ?? undefined,
      });
      json(rc, 200, { success: true, result: await listDeliveries(rc.ctx.db, auth.keyId, q) });
    },
  },
];
