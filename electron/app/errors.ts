import { ORPCError } from '@orpc/client';
import { IPC_ERROR_STATUS, isIpcErrorCode, type IpcErrorCode, type IpcErrorData } from '../../shared/ipc/errors.ts';
import { ServiceError } from '../core/api/errors.ts';
import { CoreError } from '../core/errors.ts';
import { MediaToolError, type MediaErrorCode } from '../core/media/errors.ts';

/** A typed IPC error. Thrown by handlers; both bindings send it to the renderer as is. */
export function ipcError(
  code: IpcErrorCode,
  message: string,
  data?: IpcErrorData,
): ORPCError<IpcErrorCode, IpcErrorData> {
  return new ORPCError(code, { defined: true, status: IPC_ERROR_STATUS[code], message, data });
}

/**
 * Any error a handler lets escape → a typed IPC error. The core's errors carry codes of the one
 * vocabulary (docs/architecture.md), so they pass unchanged: a ServiceError's is the service's (or a
 * client's), a CoreError's the shell's. Unknown errors keep their message but never their stack.
 */
export function toIpcError(error: unknown): ORPCError<IpcErrorCode, IpcErrorData> {
  if (error instanceof ORPCError && isIpcErrorCode(error.code)) {
    return error.defined
      ? (error as ORPCError<IpcErrorCode, IpcErrorData>)
      : ipcError(error.code, error.message, error.data as IpcErrorData);
  }
  if (error instanceof ServiceError) {
    return ipcError(error.code, error.message, {
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
    });
  }
  if (error instanceof CoreError) return ipcError(error.code, error.message);
  if (error instanceof MediaToolError) return ipcError(mediaToolCode(error.code), error.message);
  if (error instanceof Error) {
    const code = systemCode((error as NodeJS.ErrnoException).code);
    if (code) return ipcError(code, error.message);
    if (error.name === 'AbortError') return ipcError('canceled', error.message);
    return ipcError('internal_error', error.message);
  }
  return ipcError('internal_error', typeof error === 'string' ? error : 'Unexpected error');
}

/** The media tools' codes that say more than "it failed": a missing or bad input, a timeout, a cancel. */
function mediaToolCode(code: MediaErrorCode): IpcErrorCode {
  if (code === 'input_missing') return 'not_found';
  if (code.startsWith('input_') || code === 'invalid_argument') return 'invalid_request_error';
  if (code === 'timeout' || code === 'canceled') return code;
  return 'internal_error';
}

/** Node's own codes for a file that is not there or not ours, and for an aborted call. */
function systemCode(code: string | undefined): IpcErrorCode | undefined {
  if (code === 'ENOENT') return 'not_found';
  if (code === 'EACCES' || code === 'EPERM') return 'forbidden';
  if (code === 'ABORT_ERR') return 'canceled';
  return undefined;
}
