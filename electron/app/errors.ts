import { ORPCError } from '@orpc/client';
import { IPC_ERROR_STATUS, isIpcErrorCode, type IpcErrorCode, type IpcErrorData } from '../../shared/ipc/errors.ts';

/** A typed IPC error. Thrown by handlers; both bindings send it to the renderer as is. */
export function ipcError(
  code: IpcErrorCode,
  message: string,
  data?: IpcErrorData,
): ORPCError<IpcErrorCode, IpcErrorData> {
  return new ORPCError(code, { defined: true, status: IPC_ERROR_STATUS[code], message, data });
}

/** The service client's error kinds (electron/core/api ApiError.kind) → IPC codes. */
const CODE_BY_KIND: Readonly<Record<string, IpcErrorCode>> = {
  authentication: 'authentication_error',
  permission: 'permission_error',
  rate_limit: 'rate_limit_exceeded',
  invalid_request: 'invalid_request_error',
  not_found: 'not_found_error',
  payload_too_large: 'payload_too_large',
  unsupported_media_type: 'unsupported_media_type',
  unsupported_parameter: 'unsupported_parameter',
  provider_unavailable: 'provider_unavailable',
  server: 'internal_error',
  network: 'network_error',
  timeout: 'timeout',
  cancelled: 'canceled',
  canceled: 'canceled',
  invalid_response: 'internal_error',
};

function field(value: object, key: string): unknown {
  return (value as Record<string, unknown>)[key];
}

/**
 * Any error a handler lets escape → a typed IPC error. Core errors are recognised by shape (a
 * `kind` or `code` we know), so the app layer does not depend on each core module's classes.
 * Unknown errors keep their message but never their stack.
 */
export function toIpcError(error: unknown): ORPCError<IpcErrorCode, IpcErrorData> {
  if (error instanceof ORPCError && isIpcErrorCode(error.code)) {
    return error.defined
      ? (error as ORPCError<IpcErrorCode, IpcErrorData>)
      : ipcError(error.code, error.message, error.data as IpcErrorData);
  }
  if (typeof error === 'object' && error !== null) {
    const kind = field(error, 'kind');
    const code = field(error, 'code');
    const message =
      typeof field(error, 'message') === 'string' ? (field(error, 'message') as string) : 'Unexpected error';
    const status = field(error, 'status');
    const retryAfter = field(error, 'retryAfter');
    const data: IpcErrorData = {
      ...(typeof status === 'number' ? { status } : {}),
      ...(typeof retryAfter === 'number' ? { retryAfter } : {}),
    };
    const mapped =
      (typeof kind === 'string' ? CODE_BY_KIND[kind] : undefined) ??
      (isIpcErrorCode(code) ? code : undefined) ??
      nodeCode(code);
    if (mapped) return ipcError(mapped, message, data);
    if (error instanceof Error && error.name === 'AbortError') return ipcError('canceled', message);
    return ipcError('internal_error', message);
  }
  return ipcError('internal_error', typeof error === 'string' ? error : 'Unexpected error');
}

/** Node's file-system codes and the media tools' codes that reach the UI. */
function nodeCode(code: unknown): IpcErrorCode | undefined {
  if (code === 'ENOENT' || code === 'input_missing') return 'not_found';
  if (typeof code === 'string' && (code.startsWith('input_') || code === 'invalid_argument'))
    return 'invalid_request_error';
  if (code === 'EACCES' || code === 'EPERM') return 'forbidden';
  if (code === 'ABORT_ERR') return 'canceled';
  return undefined;
}
