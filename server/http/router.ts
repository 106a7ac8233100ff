import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Permission } from '../../shared/api/index.ts';
import { AUTH_MESSAGES, RATE_LIMIT_HEADERS } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { verifyKey, verifyKeyCounting } from '../auth/api-keys.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, rateLimitError } from '../errors.ts';
import { DatabaseUnavailableError } from '../storage/sql/unavailable.ts';
import type { RateDecision } from '../limits/rate-limiter.ts';
import { lingerAfterAnswer } from './linger.ts';
import { READY_RETRY_AFTER_SECONDS, sendError, sendJson } from './respond.ts';

export interface RequestContext {
  ctx: ServiceContext;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Capture groups of the route's pattern, already percent-decoded. */
  params: string[];
  /** Rate-limit headers, added to every response of an authenticated request. */
  headers: Record<string, string>;
}

/** A request whose key the router has checked: its handler is given the caller, never null. */
export interface AuthenticatedRequest extends RequestContext {
  auth: AuthenticatedKey;
}

interface RouteMatch {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Matched against the path after `/v1`. */
  path: RegExp;
}

/**
 * A route that needs a key: the router authenticates the request, counts it against the rate
 * limits and checks the permission before it calls the handler (docs/api.md, "Hardening").
 */
export interface KeyedRoute extends RouteMatch {
  public?: false;
  /** The permission a key needs (any one of a list). */
  permission: Permission | readonly Permission[];
  /**
   * False for reads that only follow work already counted, or report the counters themselves
   * (docs/api.md, "What counts against the rate limits"): a generation's status, an item's download,
   * the usage. Waiting asynchronously must not cost an account more of its rate limit than waiting
   * synchronously does, and looking at the counters must not move them. The key is still checked.
   */
  rateLimited?: boolean;
  handle(rc: AuthenticatedRequest): Promise<void> | void;
}

/**
 * A route without a key, declared so in its table: it carries its own proof (a signed URL, a
 * provider's webhook signature) or tells nothing a caller without a key does not already know
 * (the OpenAPI document).
 */
export interface PublicRoute extends RouteMatch {
  public: true;
  handle(rc: RequestContext): Promise<void> | void;
}

export type Route = KeyedRoute | PublicRoute;

export function isPublic(route: Route): route is PublicRoute {
  return route.public === true;
}

/**
 * A path outside /v1 (the health probes): matched exactly, GET and HEAD only, never authenticated
 * or rate limited, so that a load balancer can call it without a key.
 */
export interface Probe {
  path: string;
  handle(rc: RequestContext): Promise<void> | void;
}

export function json(rc: RequestContext, status: number, body: unknown, extra: Record<string, string> = {}): void {
  sendJson(rc.res, status, body, { ...rc.headers, ...extra });
}

/** The request handler: match, authenticate, rate-limit, run; every failure is a JSON error. */
export function createRequestHandler(ctx: ServiceContext, routes: readonly Route[], probes: readonly Probe[] = []) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const rc: RequestContext = {
      ctx,
      req,
      res,
      url: new URL('http://localhost/'),
      params: [],
      headers: {},
    };
    handle(rc, routes, probes).catch((error: unknown) => {
      if (error instanceof DatabaseUnavailableError) {
        ctx.logger.warn(`${req.method ?? '?'} ${req.url?.split('?')[0] ?? '?'} not completed: ${error.message}`);
        if (!req.complete) closeAfterAnswer(rc);
        sendError(res, databaseUnavailable(), rc.headers);
      } else if (error instanceof ApiError) {
        // A refusal before the body was read: close the connection so the unread body is not
        // taken for the next request on it.
        if (!req.complete) closeAfterAnswer(rc);
        sendError(res, error, rc.headers);
      } else {
        ctx.logger.error(
          `${req.method ?? '?'} ${req.url ?? '?'} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        sendError(res, new ApiError('internal_error', 'internal error; the request was not completed'), rc.headers);
      }
    });
  };
}

/** The answer closes the connection, lingering so that a client still sending reads it (linger.ts). */
function closeAfterAnswer(rc: RequestContext): void {
  rc.headers['connection'] = 'close';
  lingerAfterAnswer(rc.req);
}

/**
 * The database lost while serving (sql/unavailable.ts): the same answer as the file storage's
 * (blobs/guard.ts), 503 `provider_unavailable`, the one 503 code the API has, with the wait /readyz
 * gives while the database does not answer. The
 * cause goes to the log only. Whatever the request wrote went in transactions that rolled back, and
 * files it had stored are removed where their rows failed (generation/finish.ts, http/routes/upload-receive.ts).
 */
function databaseUnavailable(): ApiError {
  return new ApiError(
    'provider_unavailable',
    'the database is unavailable; the request was not completed, try again shortly',
    { retry_after: READY_RETRY_AFTER_SECONDS },
    { 'retry-after': String(READY_RETRY_AFTER_SECONDS) },
  );
}

async function handle(rc: RequestContext, routes: readonly Route[], probes: readonly Probe[]): Promise<void> {
  const { req } = rc;
  try {
    rc.url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    throw new ApiError('invalid_request_error', 'malformed request URL');
  }
  const path = rc.url.pathname;
  const probe = probes.find((p) => p.path === path);
  if (probe) {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new ApiError(
        'method_not_allowed',
        `${req.method ?? ''} is not supported on ${path} (allowed: GET, HEAD)`,
        {},
        {
          allow: 'GET, HEAD',
        },
      );
    await probe.handle(rc);
    return;
  }
  if (!path.startsWith('/v1/')) throw new ApiError('not_found_error', `no endpoint at ${path}; the API is under /v1`);
  const rest = path.slice(3);
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const onPath: Route[] = [];
  for (const route of routes) {
    const match = route.path.exec(rest);
    if (!match) continue;
    onPath.push(route);
    if (route.method !== method) continue;
    try {
      rc.params = match.slice(1).map((p) => decodeURIComponent(p ?? ''));
    } catch {
      throw new ApiError('invalid_request_error', 'malformed percent-encoding in the path');
    }
    if (isPublic(route)) await route.handle(rc);
    else await route.handle(await authenticate(rc, route.permission, route.rateLimited !== false));
    return;
  }
  // What exists is only told to callers with a key, except on the key-less paths (signed URLs,
  // the OpenAPI document), which say nothing a caller without a key does not already know.
  if (onPath.length === 0 || onPath.some((r) => !isPublic(r))) await authenticate(rc, null);
  if (onPath.length > 0) {
    const allowed = [...new Set(onPath.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])))];
    throw new ApiError(
      'method_not_allowed',
      `${req.method ?? ''} is not supported on ${path} (allowed: ${allowed.join(', ')})`,
      {},
      {
        allow: allowed.join(', '),
      },
    );
  }
  throw new ApiError('not_found_error', `no endpoint at ${path}`);
}

/**
 * Checks the bearer key, counts the request against the rate limits, then checks `permission`
 * (one of a list is enough; null: any valid key will do). Answers the request with its caller.
 */
async function authenticate(
  rc: RequestContext,
  permission: Permission | readonly Permission[] | null,
  counted = true,
): Promise<AuthenticatedRequest> {
  const header = rc.req.headers.authorization;
  if (header === undefined || header.trim() === '') throw new ApiError('authentication_error', AUTH_MESSAGES.missing);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new ApiError('authentication_error', AUTH_MESSAGES.missing);
  const presented = match[1] ?? '';
  let auth: AuthenticatedKey | null;
  let decision: RateDecision | undefined;
  if (counted && rc.ctx.db.dialect === 'postgres') {
    // Several nodes on PostgreSQL: the key is read and the request counted in one round trip.
    const at = rc.ctx.rate.windows();
    const found = await verifyKeyCounting(rc.ctx.db, presented, at.starts);
    auth = found?.auth ?? null;
    if (found) decision = await rc.ctx.rate.decide(found.auth.user, found.auth.limits.rate, at, found.counts);
  } else auth = await verifyKey(rc.ctx.db, presented);
  if (!auth) throw new ApiError('authentication_error', AUTH_MESSAGES.invalid);
  const authed: AuthenticatedRequest = Object.assign(rc, { auth });
  if (!counted) {
    checkPermission(auth, permission);
    return authed;
  }

  decision ??= await rc.ctx.rate.take(auth.user, auth.limits.rate, auth.keyId);
  rc.headers[RATE_LIMIT_HEADERS.limit] = String(decision.state.limit);
  rc.headers[RATE_LIMIT_HEADERS.remaining] = String(decision.state.remaining);
  rc.headers[RATE_LIMIT_HEADERS.reset] = String(decision.state.reset);
  if (!decision.ok) {
    throw rateLimitError(
      `Rate limit of ${decision.state.limit} requests per ${decision.window} exceeded`,
      decision.retryAfter,
    );
  }
  checkPermission(auth, permission);
  return authed;
}

function checkPermission(
  auth: { permissions: ReadonlySet<Permission> },
  permission: Permission | readonly Permission[] | null,
): void {
  const needed = permission === null ? [] : typeof permission === 'string' ? [permission] : permission;
  if (needed.length > 0 && !needed.some((p) => auth.permissions.has(p)))
    throw new ApiError('permission_error', AUTH_MESSAGES.forbidden);
}
