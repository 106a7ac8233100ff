import type { RemoteProvider } from '../../providers/types.ts';
import { ApiError } from '../../errors.ts';
import { readRawBody } from '../body.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/** Provider webhook bodies carry the whole job (Replicate's include its logs): more than a request's 64 KB. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * `POST /v1/provider-webhooks/:provider`: a provider telling us one of its jobs is done (asked for
 * only when the service has `--public-url`). No API key: the provider's adapter proves the
 * delivery is the provider's (its signature, where the provider signs them); a valid one wakes
 * the job's runner, which otherwise polls slowly as a safety net; on PostgreSQL also when that
 * runner is on another node (webhook-relay.ts).
 */
export const providerWebhookRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/provider-webhooks\/([^/]+)$/,
    permission: null,
    async handle(rc) {
      const id = rc.params[0] ?? '';
      const provider = rc.ctx.catalog.providers.find((p): p is RemoteProvider => p.kind === 'remote' && p.id === id);
      const settings = provider ? rc.ctx.remote.settings(provider.id) : undefined;
      if (!provider?.adapter.webhook || !settings) {
        throw new ApiError('not_found_error', `no provider '${id}' takes webhooks here`);
      }
      const body = await readRawBody(rc.req, WEBHOOK_BODY_LIMIT);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(rc.req.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      let delivery: ReturnType<NonNullable<typeof provider.adapter.webhook>>;
      try {
        delivery = provider.adapter.webhook(settings, { headers, body });
      } catch {
        // An adapter that chokes on a body has been sent something that is not its provider's.
        delivery = undefined;
      }
      if (!delivery) {
        throw new ApiError('authentication_error', `not a valid webhook delivery from ${provider.name}`);
      }
      const waiting = rc.ctx.remote.webhooks.deliver(provider.id, delivery.jobId, delivery.status);
      // The runner may be on another node (the provider's delivery went wherever the load balancer
      // sent it). Only what this node verified is passed on.
      const relay = rc.ctx.remote.webhookRelay;
      if (!waiting && relay) await relay.forward(provider.id, delivery.jobId, delivery.status);
      json(rc, 200, { success: true, waiting });
    },
  },
];
