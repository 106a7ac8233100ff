import { listAllModels } from '../../core/api/index.ts';
import { toRateLimitState } from '../mappers.ts';
import type { DomainHandlers, SessionGetter } from '../types.ts';

/** The service's catalog and the account's usage: read through the active session's client. */
export function catalogHandlers(session: SessionGetter, now: () => number) {
  const models: DomainHandlers<'models'> = {
    list: async (input, ctx) => {
      const all = await listAllModels((await session()).api, ctx.signal);
      return { models: input?.media ? all.filter((m) => m.media === input.media) : all };
    },
    get: async ({ id }, ctx) => (await session()).api.getModel(id, { signal: ctx.signal }),
  };
  const usage: Pick<DomainHandlers<'usage'>, 'get' | 'rateLimit'> = {
    get: async (_input, ctx) => {
      const s = await session();
      const result = await s.api.getUsage({ signal: ctx.signal });
      return { usage: result, rateLimit: toRateLimitState(s.api, now()) };
    },
    rateLimit: async () => toRateLimitState((await session()).api, now()),
  };
  return { models, usage };
}
