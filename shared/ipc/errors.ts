import { z } from 'zod';
import { CLIENT_ERROR_CODES, CLIENT_ERROR_STATUS, ERROR_CODES, ERROR_STATUS } from '../api/errors.ts';

/**
 * The shell's own error codes and their HTTP status (the service's come from shared/api).
 * The statuses are used by the HTTP binding and as oRPC's `status`.
 */
const SHELL_ERROR_STATUS = {
  invalid_input: 400, // the input failed the route's zod schema; `data.issues` lists why
  not_found: 404, // no such route, job, profile, item …
  not_available: 501, // the capability is not wired in this build or mode (e.g. reveal in browser mode)
  forbidden: 403, // the sender or the path is not allowed
  keychain_unavailable: 503, // no secure store for the key; `message` says why
} as const;
type ShellErrorCode = keyof typeof SHELL_ERROR_STATUS;

/**
 * Every error a route can answer with. The renderer shows `message` as is (it carries the
 * service's own message where there is one) and branches on `code`.
 *
 * The service's codes and a client's own (shared/api/errors.ts) pass through unchanged; the rest
 * are the shell's own, for what no service answer covers (a local file, a keychain, a route).
 * `conflict` (409, e.g. retrying a job that is not failed) is the service's code, used by the shell too.
 */
export const IPC_ERROR_CODES = [
  ...(Object.keys(SHELL_ERROR_STATUS) as ShellErrorCode[]),
  // A client's (no answer to read a code from), passed through unchanged.
  ...CLIENT_ERROR_CODES,
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

/** HTTP status for each code: the shell's own table, a client's and the service's for theirs. */
export const IPC_ERROR_STATUS: Readonly<Record<IpcErrorCode, number>> = {
  ...SHELL_ERROR_STATUS,
  ...CLIENT_ERROR_STATUS,
  ...ERROR_STATUS,
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
