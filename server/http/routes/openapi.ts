import { openApiDocument } from '../openapi-document.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';

/** The OpenAPI document is public: it describes the interface and holds nothing of anyone's. */
export const openApiRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/openapi\.json$/,
    permission: null,
    handle(rc) {
      json(rc, 200, openApiDocument(`${rc.ctx.origin()}/v1`), { 'cache-control': 'public, max-age=300' });
    },
  },
];
