import type { ApiError } from '../errors.ts';

export function errorBody(error: ApiError): Record<string, unknown> {
  return { success: false, message: error.message, code: error.code, ...error.extra };
}
