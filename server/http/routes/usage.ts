import { retentionMs } from '../../context.ts';
import { storageStanding } from '../../limits/storage-quota.ts';
import { sql } from '../../storage/db.ts';
import { webhookSecretExists } from '../../webhooks/secrets.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/**
 * `GET /usage` (DESIGN.md "Usage"): the account's real limits (its tier's, with any set by
 * `users set-limits`), and where the caller stands against them.
 */
export const usageRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/usage$/,
    permission: 'read',
    handle(rc) {
      const { ctx } = rc;
      const auth = rc.auth;
      if (!auth) throw new Error('usage without authentication');
      const limits = auth.limits;
      const storage = storageStanding({ db: ctx.db, now: ctx.clock.now(), reservations: ctx.reservations }, auth.user);
      const keys = sql(
        ctx.db,
        'SELECT id, name, requests, cost FROM api_keys WHERE user_id = ? ORDER BY created_at, id',
      ).all(auth.user) as Array<{
        id: string;
        name: string;
        requests: number;
        cost: number;
      }>;
      const byKey = keys.map((k) => ({
        keyId: k.id,
        name: k.name,
        cost: Math.round(k.cost * 1e6) / 1e6,
        requests: k.requests + (ctx.keyRequests.get(k.id) ?? 0),
      }));
      json(rc, 200, {
        success: true,
        result: {
          tier: auth.tier,
          limits: {
            rate: limits.rate,
            concurrency: limits.concurrency,
            storageBytes: limits.storageBytes,
            retentionDays: limits.retentionDays,
            retentionSeconds: retentionMs(ctx, limits) / 1000,
          },
          usage: {
            requests: ctx.rate.usage(auth.user),
            running: {
              image: ctx.concurrency.count(auth.user, 'image'),
              video: ctx.concurrency.count(auth.user, 'video'),
            },
            storageBytes: storage.used,
            /** Declared sizes of uploads not yet completed and estimates of running generations. */
            reservedBytes: storage.reserved,
            cost: { total: Math.round(byKey.reduce((n, k) => n + k.cost, 0) * 1e6) / 1e6, byKey },
          },
          // Whether the calling key has a webhook signing secret; the secret itself is only ever
          // shown when it is made (keys create, keys rotate-webhook-secret).
          webhookSecret: { exists: webhookSecretExists(ctx.db, auth.keyId) },
        },
      });
    },
  },
];
