import { UploadRequest } from '../../../shared/api/index.ts';
import { completeUpload } from '../../uploads/complete.ts';
import { receiveUpload } from './upload-receive.ts';
import { createUploadTicket } from '../../uploads/tickets.ts';
import { discardBody, readJsonBody } from '../body.ts';
import type { Route } from '../router.ts';
import { json } from '../router.ts';
import { parseOrThrow } from '../../errors.ts';

/** Uploads (docs/api.md, "Uploads"): ticket, signed PUT, completion. Listed before `/media/:id` routes. */
export const uploadRoutes: Route[] = [
  {
    method: 'POST',
    path: /^\/media\/upload$/,
    permission: 'upload',
    async handle(rc) {
      const body = parseOrThrow(UploadRequest, await readJsonBody(rc.req));
      json(rc, 200, { success: true, result: await createUploadTicket(rc.ctx, rc.auth, body) });
    },
  },
  {
    method: 'PUT',
    path: /^\/uploads\/([^/]+)$/,
    public: true,
    handle: receiveUpload,
  },
  {
    method: 'POST',
    path: /^\/media\/(upl_[^/]+)$/,
    permission: 'upload',
    async handle(rc) {
      // The body is optional and unused; an oversized one is still refused, and not read on.
      await discardBody(rc.req);
      json(rc, 200, { success: true, result: await completeUpload(rc.ctx, rc.auth, rc.params[0] ?? '') });
    },
  },
];
