import { z } from 'zod';

/**
 * Every error code the service answers with. The spec names the first three; the rest are the
 * decisions in docs/api.md for what the spec leaves open.
 */
export const ERROR_CODES = [
  'authentication_error',
  'permission_error',
  'rate_limit_exceeded',
  'invalid_request_error',
  'not_found_error',
  'method_not_allowed',
  /** The resource is busy with another request (an upload another PUT is receiving); Retry-After says when to retry. */
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'unsupported_parameter',
  /** A provider refused the prompt or image under its content policy (docs/providers.md); no fallback. */
  'content_policy_violation',
  'provider_unavailable',
  'internal_error',
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** The HTTP status that goes with each code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  authentication_error: 401,
  permission_error: 403,
  rate_limit_exceeded: 429,
  invalid_request_error: 400,
  not_found_error: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unsupported_parameter: 422,
  content_policy_violation: 422,
  provider_unavailable: 503,
  internal_error: 500,
};

/**
 * The codes a client of the service gives a failure that carries no answer to read a code from: it
 * could not reach the service, stopped waiting, was canceled, or got an answer that is not the
 * interface. The service never sends them; a client reports them beside ERROR_CODES, so one
 * vocabulary runs from the wire to the screen (docs/architecture.md).
 */
export const CLIENT_ERROR_CODES = ['network_error', 'timeout', 'canceled', 'invalid_response'] as const;
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** The status a gateway would give each (499: the caller closed the request, as nginx names it). */
export const CLIENT_ERROR_STATUS: Readonly<Record<ClientErrorCode, number>> = {
  network_error: 502,
  timeout: 504,
  canceled: 499,
  invalid_response: 502,
};

/** The spec's exact authentication messages. */
export const AUTH_MESSAGES = {
  missing: 'API key is missing',
  invalid: 'Invalid API key',
  forbidden: 'API key does not have permission to access this resource',
} as const;

/**
 * A failed response. `code` is kept as a plain string when parsing so that a client can still
 * read an error from another implementation that uses codes we do not know.
 */
export const ErrorBody = z.looseObject({
  success: z.literal(false),
  message: z.string(),
  code: z.string(),
  /** Only on 429: whole seconds to wait. */
  retry_after: z.number().int().nonnegative().optional(),
  /**
   * OpenAI's error object beside the spec's fields (extension), so the official `openai` client
   * shows the message: `type` and `code` are the spec's `code`.
   */
  error: z.object({ message: z.string(), type: z.string(), code: z.string() }).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
