import type { ServerResponse } from 'node:http';
import { sendJson, startLoopback } from './loopback.ts';
import { FAL_LISTING, falModel } from './listings.ts';

/**
 * A contract fake of fal's platform API (https://docs.fal.ai/platform-apis), base
 * `http://127.0.0.1:PORT/v1` (`CLIPDESK_FAL_PLATFORM_URL`):
 * - `GET /v1/models?category=&status=&limit=&cursor=&expand=openapi-3.0` →
 *   `{models: [{endpoint_id, metadata, openapi?}], next_cursor, has_more}`, in pages of at most
 *   `limit` (and never more than the fake's own page size, so clients must follow the cursor);
 * - `GET /v1/models/pricing?endpoint_id=…` (1 to 50, repeated or comma-separated) →
 *   `{prices: [{endpoint_id, unit_price, unit, currency}], next_cursor, has_more}`; an endpoint
 *   without a price is left out; more than 50 ids is a 400;
 * - `Authorization: Key <key>`, else 401 `{error: {type: 'authorization_error', message}}`.
 * `down` makes every request fail at the connection (the provider unreachable).
 */
export interface FalPlatformFake {
  baseUrl: string;
  key: string;
  /** Every request received (method, path with query, lower-cased headers). */
  requests: Array<{ method: string; path: string; headers: Record<string, string> }>;
  /** Close connections without an answer. */
  down: boolean;
  close(): Promise<void>;
}

const PAGE = 20;

function fail(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { error: { type, message } });
}

function page<T>(items: T[], cursor: string | null, limit: number): { slice: T[]; next: string | null } {
  const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString('utf8')) : 0;
  const size = Math.max(1, Math.min(limit, PAGE));
  const end = start + size;
  return {
    slice: items.slice(start, end),
    next: end < items.length ? Buffer.from(String(end)).toString('base64url') : null,
  };
}

export async function startFalPlatformFake(options: { key?: string } = {}): Promise<FalPlatformFake> {
  const server = await startLoopback((req, res) => {
    if (fake.down) {
      res.socket?.destroy();
      return;
    }
    if (req.headers.authorization !== `Key ${fake.key}`)
      return fail(res, 401, 'authorization_error', 'Invalid or missing API key');
    const url = new URL(req.path, server.baseUrl);
    if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', 'Method not allowed');
    const limit = Number(url.searchParams.get('limit') ?? PAGE);
    const cursor = url.searchParams.get('cursor');
    if (url.pathname === '/v1/models') {
      const category = url.searchParams.get('category');
      const status = url.searchParams.get('status');
      const expand = url.searchParams.getAll('expand').join(',').split(',');
      const matching = FAL_LISTING.filter(
        (e) => (!category || e.category === category) && (!status || (e.status ?? 'active') === status),
      );
      const { slice, next } = page(matching, cursor, Number.isFinite(limit) ? limit : PAGE);
      const models = slice.map((e) => {
        const model = falModel(e);
        if (!expand.includes('openapi-3.0')) delete model['openapi'];
        return model;
      });
      return sendJson(res, 200, { models, next_cursor: next, has_more: next !== null });
    }
    if (url.pathname === '/v1/models/pricing') {
      const ids = url.searchParams.getAll('endpoint_id').flatMap((v) => v.split(','));
      if (ids.length === 0 || ids.length > 50)
        return fail(res, 400, 'validation_error', 'endpoint_id accepts 1 to 50 endpoint IDs');
      const prices = FAL_LISTING.filter((e) => ids.includes(e.id) && e.price).map((e) => ({
        endpoint_id: e.id,
        unit_price: e.price![0],
        unit: e.price![1],
        currency: 'USD',
      }));
      const { slice, next } = page(prices, cursor, PAGE);
      return sendJson(res, 200, { prices: slice, next_cursor: next, has_more: next !== null });
    }
    return fail(res, 404, 'not_found', 'Not found');
  });
  const fake: FalPlatformFake = {
    baseUrl: `${server.baseUrl}/v1`,
    key: options.key ?? 'test-fal-key-0001',
    requests: server.requests,
    down: false,
    close: () => server.close(),
  };
  return fake;
}
