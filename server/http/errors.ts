import type { ApiError } from '../errors.ts';

/**
 * The error body: the spec's `{success:false, message, code}` (plus extras such as `retry_after`),
 * and beside it OpenAI's `error: {message, type, code}`, which the official `openai` client reads
 * for the message it shows (without it, every failure reads "400 status code (no body)").
 */
export function errorBody(error: ApiError): Record<string, unknown> {
  return errorEnvelope(error.code, error.message, error.extra);
}

/** The same body from its parts, for answers written where no ApiError is thrown (malformed HTTP). */
export function errorEnvelope(
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { success: false, message, code, ...extra, error: { message, type: code, code } };
}
