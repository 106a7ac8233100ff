import { ipcError } from '../errors.ts';
import { previewBody, previewRoutingOnce } from '../submit-route.ts';
import type { DomainHandlers, SessionGetter } from '../types.ts';

export function composeHandlers(session: SessionGetter): DomainHandlers<'compose'> {
  return {
    preview: async (input, ctx) => {
      // Variations are planned by the service from their source video, not from this body.
      if (input.variationOf)
        throw ipcError('invalid_request_error', 'Variations are routed from their source video; there is no preview');
      const s = await session();
      return previewRoutingOnce(s, previewBody(input), ctx.signal ? { signal: ctx.signal } : {});
    },
  };
}
