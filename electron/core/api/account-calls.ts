/** The client's account and service calls: usage (the tier), the routing preview, the OpenAPI document. */
import { z } from 'zod';
import { RoutingPreviewResponse, SpecUsageResponse, readUsage } from '../../../shared/api/index.ts';
import type { Usage } from '../../../shared/api/index.ts';
import type { ApiClient } from './client-types.ts';
import { ServiceError } from './errors.ts';
import { call, read } from './transport.ts';
import type { Transport } from './transport.ts';

export type AccountCalls = Pick<ApiClient, 'getUsage' | 'previewRouting' | 'getOpenApi'>;

const OpenApiDocument = z.record(z.string(), z.unknown());

/** `seen` is told every usage read, so the client keeps the tier and retention it reports. */
export function accountCalls(t: Transport, seen: (usage: Usage) => void): AccountCalls {
  return {
    async getUsage(opts) {
      const res = await read(t, '/usage', SpecUsageResponse, opts);
      const usage = readUsage(res.result, t.note);
      seen(usage);
      return usage;
    },
    async previewRouting(input, opts) {
      const res = await call(t, {
        method: 'POST',
        path: '/routing/preview',
        body: input,
        schema: RoutingPreviewResponse,
        // Nothing happens on the service, so a 5xx may be asked again like a read.
        retryServerErrors: true,
        options: opts,
        defaultTimeoutMs: t.defaultTimeoutMs,
      });
      return res.result;
    },
    async getOpenApi(opts) {
      try {
        return await read(t, '/openapi.json', OpenApiDocument, opts);
      } catch (error) {
        if (error instanceof ServiceError && (error.code === 'not_found_error' || error.code === 'invalid_response'))
          return null;
        throw error;
      }
    },
  };
}
