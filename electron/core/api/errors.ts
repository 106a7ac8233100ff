import { ERROR_CODES, type ClientErrorCode, type ErrorCode } from '../../../shared/api/errors.ts';

/**
 * The code of a failure the client reports: the service's own code (shared/api/errors.ts), or a
 * client's when there was no answer to read one from. The same codes reach the IPC and the screens
 * unchanged (docs/architecture.md).
 */
export type ServiceErrorCode = ErrorCode | ClientErrorCode;

export interface ServiceErrorInit {
  status?: number;
  /** Seconds the service asked us to wait (429 only). */
  retryAfter?: number;
  cause?: unknown;
}

/**
 * Every failure the service client reports (and the downloads and uploads that talk to the
 * service). `message` is the service's own message when it sent one, so the UI and the CLI can
 * show it verbatim.
 */
export class ServiceError extends Error {
  readonly code: ServiceErrorCode;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ServiceErrorCode, message: string, init: ServiceErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = init.status;
    this.retryAfter = init.retryAfter;
  }

  /** A plain object for IPC and JSON output (never carries request headers, so never the key). */
  toJSON(): { code: ServiceErrorCode; message: string; status?: number; retryAfter?: number } {
    return {
      code: this.code,
      message: this.message,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.retryAfter === undefined ? {} : { retryAfter: this.retryAfter }),
    };
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** Whether a code read from an answer is one of the service's (another implementation may send others). */
export function isServiceCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

/** The code for a failed response: the service's code when we know it, else the status decides. */
export function errorCodeFor(status: number, code: string | undefined): ErrorCode {
  if (isServiceCode(code)) return code;
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 404 || status === 410) return 'not_found_error';
  if (status === 413) return 'payload_too_large';
  if (status === 415) return 'unsupported_media_type';
  if (status === 422) return 'unsupported_parameter';
  if (status === 503) return 'provider_unavailable';
  if (status >= 500) return 'internal_error';
  return 'invalid_request_error';
}
