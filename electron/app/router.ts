import { ORPCError } from '@orpc/client';
import { ValidationError } from '@orpc/contract';
import { implement, type Router } from '@orpc/server';
import type { StandardHandlerOptions } from '@orpc/server/standard';
import { ipcContract, isIpcRoute, type IpcContract } from '../../shared/ipc/contract.ts';
import { ipcError, toIpcError } from './errors.ts';
import type { IpcContext, IpcHandlers } from './types.ts';

export type IpcRouter = Router<IpcContract, IpcContext>;

type AnyHandler = (input: unknown, ctx: unknown) => unknown;
interface ProcedureBuilder {
  handler(fn: (opts: { input: unknown; context: IpcContext; signal?: AbortSignal }) => Promise<unknown>): unknown;
}

/**
 * The one oRPC router both bindings serve. Each route calls its handler as `(input, ctx)`, and any
 * error a handler throws is turned into a typed one (errors.ts).
 */
export function createIpcRouter(handlers: IpcHandlers): IpcRouter {
  const os = implement(ipcContract).$context<IpcContext>() as unknown as Record<
    string,
    Record<string, ProcedureBuilder>
  >;
  const router: Record<string, Record<string, unknown>> = {};
  for (const [domain, actions] of Object.entries(ipcContract)) {
    const domainRouter: Record<string, unknown> = {};
    const domainHandlers = (handlers as unknown as Record<string, Record<string, unknown>>)[domain];
    for (const action of Object.keys(actions)) {
      const handler = domainHandlers?.[action];
      const builder = os[domain]?.[action];
      if (!builder) throw new Error(`contract route ${domain}.${action} has no builder`);
      // The handler map's type already demands every route; this catches a map built around it.
      if (typeof handler !== 'function') throw new Error(`contract route ${domain}.${action} has no handler`);
      domainRouter[action] = builder.handler(async ({ input, context, signal }) => {
        try {
          return await (handler as AnyHandler)(input, { ...context, signal });
        } catch (error) {
          throw toIpcError(error);
        }
      });
    }
    router[domain] = domainRouter;
  }
  return router as unknown as IpcRouter;
}

/**
 * `/app/info` (after the binding's prefix) → `app.info`, or null when the path is not a plain
 * two-segment route name. Only own routes of the contract pass, never `__proto__` and friends.
 */
export function routeFromPath(pathname: string, prefix = ''): string | null {
  if (prefix && !pathname.startsWith(`${prefix}/`)) return null;
  const rest = pathname.slice(prefix.length).replace(/^\/+/, '');
  const parts = rest.split('/');
  if (parts.length !== 2) return null;
  let name: string;
  try {
    name = parts.map((p) => decodeURIComponent(p)).join('.');
  } catch {
    return null;
  }
  return isIpcRoute(name) ? name : null;
}

function issuePath(path: readonly (PropertyKey | { key: PropertyKey })[] | undefined): string {
  if (!path || path.length === 0) return '(input)';
  return path.map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
}

/**
 * Options both bindings give oRPC's handler:
 * - only routes of the contract are looked up (a second line behind oRPC's own matcher);
 * - a failed input check becomes `invalid_input` with one line per issue;
 * - a failed output check (a handler returning more or less than the contract says) becomes
 *   `internal_error` without echoing the data.
 */
export function rpcHandlerOptions(prefix: string): StandardHandlerOptions<IpcContext> {
  return {
    interceptors: [
      async (options) => {
        if (routeFromPath(options.request.url.pathname, prefix) === null) {
          throw ipcError(
            'not_found',
            `Unknown route ${JSON.stringify(options.request.url.pathname.slice(prefix.length, prefix.length + 100))}`,
          );
        }
        return options.next();
      },
    ],
    clientInterceptors: [
      async (options) => {
        try {
          return await options.next();
        } catch (error) {
          if (error instanceof ORPCError && error.cause instanceof ValidationError) {
            const issues = error.cause.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
            if (error.code === 'BAD_REQUEST') {
              const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
              throw ipcError('invalid_input', `Invalid input: ${summary}`.slice(0, 1000), { issues });
            }
            throw ipcError('internal_error', 'The handler returned data that does not match the contract.');
          }
          throw error;
        }
      },
    ],
  };
}
