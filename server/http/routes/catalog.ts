import { PageQuery } from '../../../shared/api/index.ts';
import { ApiError } from '../../errors.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';
import { parseOrThrow } from '../../errors.ts';

function page<T>(items: readonly T[], url: URL): { total: number; items: T[] } {
  const q = parseOrThrow(PageQuery, {
    limit: url.searchParams.get('limit') ?? undefined,
    page: url.searchParams.get('page') ?? undefined,
  });
  const start = q.page * q.limit;
  return { total: items.length, items: items.slice(start, start + q.limit) };
}

/**
 * `/models`, `/models/:id` (the id is `base/slug[:version]`, slash raw or %2F), `/providers`, `/providers/:id`.
 * Each reads the providers' health afresh first (on PostgreSQL, the nodes' shared table: health.ts),
 * as their status and cooldowns are part of every answer.
 */
export const catalogRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/models$/,
    permission: 'read',
    async handle(rc) {
      await rc.ctx.providerHealth.refresh();
      const { catalog } = rc.ctx;
      // Models appear once a provider that offers them is configured (the procedural ones always do).
      const { total, items } = page(catalog.listedModels(), rc.url);
      json(rc, 200, { success: true, result: { total, models: items.map((m) => catalog.modelRecord(m)) } });
    },
  },
  {
    method: 'GET',
    path: /^\/models\/(.+)$/,
    permission: 'read',
    async handle(rc) {
      await rc.ctx.providerHealth.refresh();
      const id = rc.params[0] ?? '';
      const found = rc.ctx.catalog.findModel(id);
      if (!found) throw new ApiError('not_found_error', `unknown model '${id}'`);
      json(rc, 200, { success: true, result: rc.ctx.catalog.modelRecord(found.model, found.version) });
    },
  },
  {
    method: 'GET',
    path: /^\/providers$/,
    permission: 'read',
    async handle(rc) {
      await rc.ctx.providerHealth.refresh();
      const { catalog } = rc.ctx;
      const { total, items } = page(catalog.providers, rc.url);
      json(rc, 200, { success: true, result: { total, providers: items.map((p) => catalog.providerRecord(p)) } });
    },
  },
  {
    method: 'GET',
    path: /^\/providers\/([^/]+)$/,
    permission: 'read',
    async handle(rc) {
      await rc.ctx.providerHealth.refresh();
      const id = rc.params[0] ?? '';
      const provider = rc.ctx.catalog.findProvider(id);
      if (!provider) throw new ApiError('not_found_error', `unknown provider '${id}'`);
      json(rc, 200, { success: true, result: rc.ctx.catalog.providerRecord(provider) });
    },
  },
];
