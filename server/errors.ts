import type { z } from 'zod';
import type { ErrorCode } from '../shared/api/index.ts';
import { ERROR_STATUS } from '../shared/api/index.ts';

/**
 * An error the client is meant to see: `{success:false, message, code}` with the status that goes
 * with the code (shared/api/errors.ts). Anything else thrown by a handler is a 500.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
    this.headers = headers;
  }
}

/** The one way every limit answers (spec, Limits rule 1): 429 with whole seconds to wait. */
export function rateLimitError(what: string, retryAfterSeconds: number): ApiError {
  const wait = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(
    'rate_limit_exceeded',
    `${what}. Retry after ${wait} second${wait === 1 ? '' : 's'}.`,
    { retry_after: wait },
    { 'retry-after': String(wait) },
  );
}

/** Parses with a zod schema; a failure is a 400 naming the first offending field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  throw new ApiError('invalid_request_error', `${field}: ${issue?.message ?? 'invalid value'}`);
}
