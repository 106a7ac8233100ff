import type { RemoteProvider } from '../../providers/types.ts';
import { ApiError } from '../../errors.ts';
import { readRawBody } from '../body.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';
import { SourceRateLimit } from '../source-limit.ts';

/**
 * Each provider's documented delivery is a few KB (fal's and Luma's the job and its output URLs;
 * Replicate's the prediction with its logs, the largest): more is not a provider's.
 */
export const PROVIDER_WEBHOOK_BODY_LIMIT = 64 * 1024;

/**
 * Deliveries per source address: a provider sends one per job (retrying a failed one a few times),
 * so a burst of 60 and 10 a second leave room for many jobs ending at once.
 */
const perSource = new SourceRateLimit('Provider webhook deliveries from this address are limited', 60, 10);

/**
 * `POST /v1/provider-webhooks/:provider`: a provider telling us one of its jobs is done. Served only
 * when the service has a public URL (`--public-url`), the only case in which providers are given
 * it. No API key: the provider's adapter proves the delivery is the provider's (its signature,
 * where the provider signs them, and otherwise its job id's form, the delivery then being only a
 * hint to poll). What a forged one can do is bounded (docs/security.md): a per-source rate limit,
 * a small body, and the hub (webhooks.ts) that keeps nothing for jobs this node does not run. The
 * answer is the same whether or not the job is known here, so it tells nobody which jobs exist.
 */
export const providerWebhookRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/provider-webhooks\/([^/]+)$/,
    public: true,
    async handle(rc) {
      const id = rc.params[0] ?? '';
      const provider = rc.ctx.catalog.providers.find((p): p is RemoteProvider => p.kind === 'remote' && p.id === id);
      const settings = provider ? rc.ctx.remote.settings(provider.id) : undefined;
      if (!provider?.adapter.webhook || !settings || rc.ctx.remote.publicUrl === undefined) {
        throw new ApiError('not_found_error', `no provider '${id}' takes webhooks here`);
      }
      perSource.take(rc.req.socket.remoteAddress ?? '');
      const body = await readRawBody(rc.req, PROVIDER_WEBHOOK_BODY_LIMIT);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(rc.req.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      let delivery: Awaited<ReturnType<NonNullable<typeof provider.adapter.webhook>>>;
      try {
        delivery = await provider.adapter.webhook(settings, { headers, body });
      } catch {
        // An adapter that chokes on a body has been sent something that is not its provider's.
        delivery = undefined;
      }
      if (!delivery) {
        throw new ApiError('authentication_error', `not a valid webhook delivery from ${provider.name}`);
      }
      const watchedHere = rc.ctx.remote.webhooks.deliver(provider.id, delivery.jobId, delivery.status);
      // The runner may be on another node (the provider's delivery went wherever the load balancer
      // sent it). Only what this node verified is passed on.
      const relay = rc.ctx.remote.webhookRelay;
      if (!watchedHere && relay) await relay.forward(provider.id, delivery.jobId, delivery.status);
      json(rc, 200, { success: true });
    },
  },
];
