import { retentionMs } from '../../generation/services.ts';
import { storageStanding } from '../../limits/storage-quota.ts';
import type { Db } from '../../storage/db.ts';
import { webhookSecretExists } from '../../webhooks/secrets.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/** How far back `byKey[].days` goes: this month and the last, whatever the day. */
const COST_DAYS = 62;
const DAY_MS = 86_400_000;

/**
 * Charges per key and UTC day over the last COST_DAYS days, from the stored items (each carries
 * the key that made it and its price, charged in the same transaction). Items retention has
 * deleted are no longer counted; `cost` per key stays the all-time figure.
 */
async function costByKeyAndDay(
  db: Db,
  user: string,
  now: number,
): Promise<Map<string, Array<{ day: string; cost: number; items: number }>>> {
  const since = (Math.floor(now / DAY_MS) - COST_DAYS + 1) * DAY_MS;
  const rows = await db.all<{ key_id: string; d: number; cost: number; items: number }>(
    `SELECT key_id, created_at / ${DAY_MS} AS d, sum(price) AS cost, count(*) AS items FROM media
     WHERE user_id = ? AND created_at >= ? AND key_id IS NOT NULL AND price > 0
     GROUP BY key_id, d ORDER BY d`,
    user,
    since,
  );
  const out = new Map<string, Array<{ day: string; cost: number; items: number }>>();
  for (const r of rows) {
    const list = out.get(r.key_id) ?? [];
    list.push({
      day: new Date(r.d * DAY_MS).toISOString().slice(0, 10),
      cost: Math.round(r.cost * 1e6) / 1e6,
      items: r.items,
    });
    out.set(r.key_id, list);
  }
  return out;
}

/**
 * `GET /usage` (docs/api.md, "Usage"): the account's real limits (its tier's, with any set by
 * `users set-limits`), and where the caller stands against them.
 */
export const usageRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/usage$/,
    permission: 'read',
    // Reading the account's own counters must not move them (docs/api.md, "What counts against the rate limits").
    rateLimited: false,
    async handle(rc) {
      const { ctx } = rc;
      const auth = rc.auth;
      const limits = auth.limits;
      const storage = await storageStanding(
        { db: ctx.db, now: ctx.clock.now(), reservations: ctx.reservations },
        auth.user,
      );
      const keys = await ctx.db.all<{
        id: string;
        name: string;
        last4: string;
        requests: number;
        cost: number;
      }>('SELECT id, name, last4, requests, cost FROM api_keys WHERE user_id = ? ORDER BY created_at, id', auth.user);
      const days = await costByKeyAndDay(ctx.db, auth.user, ctx.clock.now());
      const byKey = keys.map((k) => ({
        keyId: k.id,
        name: k.name,
        cost: Math.round(k.cost * 1e6) / 1e6,
        requests: k.requests + ctx.rate.unsavedKeyRequests(k.id),
        // Extensions (docs/workflows.md, a client's ledger checks its charges against them): the key's last
        // 4 characters, which is all a client may keep of its key, and its charges per UTC day.
        last4: k.last4,
        days: days.get(k.id) ?? [],
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
            retentionSeconds: retentionMs(ctx.retentionOverrideSeconds, limits) / 1000,
          },
          usage: {
            requests: await ctx.rate.usage(auth.user),
            running: {
              image: await ctx.concurrency.held(auth.user, 'image'),
              video: await ctx.concurrency.held(auth.user, 'video'),
            },
            storageBytes: storage.used,
            /** Declared sizes of uploads not yet completed and estimates of running generations. */
            reservedBytes: storage.reserved,
            cost: { total: Math.round(byKey.reduce((n, k) => n + k.cost, 0) * 1e6) / 1e6, byKey },
          },
          // Whether the calling key has a webhook signing secret; the secret itself is only ever
          // shown when it is made (keys create, keys rotate-webhook-secret).
          webhookSecret: { exists: await webhookSecretExists(ctx.db, auth.keyId) },
        },
      });
    },
  },
];
