import type { Generation, GenerationListResponse, GenerationRecordResponse } from '../../../shared/api/index.ts';
import { GenerationListQuery } from '../../../shared/api/index.ts';
import { ApiError, parseOrThrow } from '../../errors.ts';
import { fileUrls } from '../../generation/urls.ts';
import { getMedia, toGeneratedItem } from '../../storage/media-repo.ts';
import { getGeneration, listGenerations, toGeneration } from '../../storage/generations.ts';
import type { GenerationRow } from '../../storage/generations.ts';
import type { AuthenticatedRequest, Route } from '../router.ts';
import { json } from '../router.ts';

/** A generation of the caller's account (any of its keys: the app and the CLI may hold different ones); anyone else's, or none, is the same 404. */
async function owned(rc: AuthenticatedRequest): Promise<GenerationRow> {
  const auth = rc.auth;
  const id = rc.params[0] ?? '';
  const row = id.startsWith('gen_') ? await getGeneration(rc.ctx.db, id) : undefined;
  if (!row || row.user_id !== auth.user) throw new ApiError('not_found_error', `generation ${id} not found`);
  return row;
}

/**
 * The record with its items as they are now: file URLs signed anew (a private item's expire), an
 * item deleted since (retention) as it was.
 */
async function current(rc: AuthenticatedRequest, row: GenerationRow): Promise<Generation> {
  const generation = toGeneration(row);
  if (!generation.data) return generation;
  const urls = fileUrls(rc.ctx, row.user_id);
  const data = [];
  for (const item of generation.data) {
    const media = await getMedia(rc.ctx.db, item.id);
    data.push(media ? toGeneratedItem(media, urls) : item);
  }
  return { ...generation, data };
}

export const asyncGenerationRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/generations$/,
    permission: 'read',
    handle: async (rc) => {
      const auth = rc.auth;
      const q = parseOrThrow(GenerationListQuery, Object.fromEntries(rc.url.searchParams));
      const { total, rows } = await listGenerations(rc.ctx.db, auth.user, q.status, q.limit, q.page * q.limit);
      const generations: Generation[] = [];
      for (const r of rows) generations.push(await current(rc, r));
      const body: GenerationListResponse = { success: true, result: { total, generations } };
      json(rc, 200, body);
    },
  },
  {
    method: 'GET',
    path: /^\/generations\/([^/]+)$/,
    permission: 'read',
    // Polling one's own generation is free of the rate limits (router.ts, Route.rateLimited).
    rateLimited: false,
    handle: async (rc) => {
      const body: GenerationRecordResponse = { success: true, result: await current(rc, await owned(rc)) };
      json(rc, 200, body);
    },
  },
  {
    method: 'DELETE',
    path: /^\/generations\/([^/]+)$/,
    permission: 'generate',
    handle: async (rc) => {
      const body: GenerationRecordResponse = {
        success: true,
        result: await rc.ctx.generations.cancel(await owned(rc)),
      };
      json(rc, 200, body);
    },
  },
];
