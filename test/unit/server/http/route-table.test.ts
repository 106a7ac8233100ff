import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '../../../../shared/api/index.ts';
import type { ServiceContext } from '../../../../server/context.ts';
import { createRequestHandler, isPublic } from '../../../../server/http/router.ts';
import type { Route } from '../../../../server/http/router.ts';
import { ROUTES } from '../../../../server/service/http-server.ts';

/**
 * The route table authenticates once, in the router (docs/architecture.md, "The service's layers"):
 * every route that does not declare itself public refuses a caller without a key before its handler
 * or anything of the service is reached.
 */

/** A path the route's pattern matches: each capture group filled with a sample segment. */
function samplePath(route: Route): string {
  const sample = route.path.source
    .replace(/^\^|\$$/g, '')
    .replace(/\((upl_)?\[\^\/\]\+\)|\(\.\+\)/g, (_group, prefix: string | undefined) => `${prefix ?? ''}sample`)
    .replace(/\\(.)/g, '$1');
  expect(route.path.test(sample), `${route.path.source} matches ${sample}`).toBe(true);
  return sample;
}

const touched: string[] = [];
/** A context that records any member read: refusing a request without a key must read none. */
const untouchable = new Proxy({} as ServiceContext, {
  get(_target, member) {
    touched.push(String(member));
    if (member === 'logger') return { info() {}, warn() {}, error() {} };
    return undefined;
  },
});

let base = '';
const server = createServer(createRequestHandler(untouchable, ROUTES));
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const keyed = ROUTES.filter((route) => !isPublic(route));

describe('the route table', () => {
  it('declares as public only the routes that carry their own proof or tell nothing', () => {
    const publicRoutes = ROUTES.filter(isPublic).map((route) => `${route.method} ${route.path.source}`);
    expect(publicRoutes.sort()).toEqual(
      [
        'PUT ^\\/uploads\\/([^/]+)$',
        'GET ^\\/files\\/([^/]+)\\/([^/]+)$',
        'GET ^\\/openapi\\.json$',
        'POST ^\\/provider-webhooks\\/([^/]+)$',
      ].sort(),
    );
    expect(keyed.length).toBeGreaterThan(15);
  });

  it.each(keyed.map((route) => [route.method, samplePath(route)] as const))(
    '%s %s without a key is 401 with the spec error body, before anything of the service is read',
    async (method, path) => {
      touched.length = 0;
      const res = await fetch(`${base}${path}`, { method });
      expect(res.status).toBe(401);
      const message = AUTH_MESSAGES.missing;
      expect(await res.json()).toEqual({
        success: false,
        message,
        code: 'authentication_error',
        error: { message, type: 'authentication_error', code: 'authentication_error' },
      });
      expect(touched).toEqual([]);
    },
  );
});
