import { z } from 'zod';
import { ERROR_CODES } from '../api/errors.ts';

/**
 * Every error a route can answer with. The renderer shows `message` as is (it carries the
 * service's own message where there is one) and branches on `code`.
 *
 * The service's codes (shared/api/errors.ts) pass through unchanged; the rest are the shell's own.
 */
export const IPC_ERROR_CODES = [
  // The shell's own.
  'invalid_input', // the input failed the route's zod schema; `data.issues` lists why
  'not_found', // no such route, job, profile, item …
  'not_available', // the capability is not wired in this build or mode (e.g. reveal in browser mode)
  'forbidden', // the sender or the path is not allowed
  'conflict', // e.g. retrying a job that is not failed
  'keychain_unavailable', // no secure store for the key; `message` says why
  'network_error',
  'timeout',
  'canceled',
  // The service's, passed through unchanged.
  ...ERROR_CODES,
] as const;
export const IpcErrorCode = z.enum(IPC_ERROR_CODES);
export type IpcErrorCode = z.infer<typeof IpcErrorCode>;

/** Extra data some errors carry. All optional, so any code can be raised with just a message. */
export const IpcErrorData = z
  .object({
    /** rate_limit_exceeded: seconds until a retry can succeed. */
    retryAfter: z.number().nonnegative().optional(),
    /** invalid_input: one line per failed check, `path: message`. */
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    /** not_available: which core service is missing. */
    capability: z.string().optional(),
    /** The HTTP status the service answered, when the error came from it. */
    status: z.number().int().optional(),
  })
  .optional();
export type IpcErrorData = z.infer<typeof IpcErrorData>;

/** HTTP status for each code, used by the HTTP binding (and as oRPC's `status`). */
export const IPC_ERROR_STATUS: Readonly<Record<IpcErrorCode, number>> = {
  invalid_input: 400,
  not_found: 404,
  not_available: 501,
  forbidden: 403,
  conflict: 409,
  keychain_unavailable: 503,
  network_error: 502,
  timeout: 504,
  canceled: 499,
  authentication_error: 401,
  permission_error: 403,
  rate_limit_exceeded: 429,
  invalid_request_error: 400,
  not_found_error: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unsupported_parameter: 422,
  provider_unavailable: 503,
  internal_error: 500,
};

/** The oRPC error map every route declares, so clients get typed errors (`isDefinedError`). */
export const ipcErrorMap = Object.fromEntries(
  IPC_ERROR_CODES.map((code) => [code, { status: IPC_ERROR_STATUS[code], data: IpcErrorData }]),
) as { [K in IpcErrorCode]: { status: number; data: typeof IpcErrorData } };

/** The plain shape of an error as the renderer sees it, whatever the transport. */
export interface IpcErrorShape {
  code: IpcErrorCode;
  message: string;
  data?: IpcErrorData;
}

export function isIpcErrorCode(code: unknown): code is IpcErrorCode {
  return typeof code === 'string' && (IPC_ERROR_CODES as readonly string[]).includes(code);
}
