/**
 * Typed errors of the service client. Every failure the client reports is an ApiError whose
 * `kind` says what happened; `message` is the service's own message when it sent one, so the UI
 * and the CLI can show it verbatim.
 */
export const API_ERROR_KINDS = [
  'authentication',
  'permission',
  'rate_limit',
  'invalid_request',
  'not_found',
  'payload_too_large',
  'unsupported_media_type',
  'unsupported_parameter',
  'provider_unavailable',
  'server',
  'network',
  'timeout',
  'cancelled',
  'invalid_response',
] as const;
export type ApiErrorKind = (typeof API_ERROR_KINDS)[number];

export interface ApiErrorInit {
  status?: number;
  code?: string;
  /** Seconds the service asked us to wait (429 only). */
  retryAfter?: number;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly kind: ApiErrorKind;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(kind: ApiErrorKind, message: string, init: ApiErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ApiError';
    this.kind = kind;
    this.status = init.status;
    this.code = init.code;
    this.retryAfter = init.retryAfter;
  }

  /** A plain object for IPC and JSON output (never carries request headers, so never the key). */
  toJSON(): { kind: ApiErrorKind; message: string; status?: number; code?: string; retryAfter?: number } {
    return {
      kind: this.kind,
      message: this.message,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.code === undefined ? {} : { code: this.code }),
      ...(this.retryAfter === undefined ? {} : { retryAfter: this.retryAfter }),
    };
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

const KIND_BY_CODE: Readonly<Record<string, ApiErrorKind>> = {
  authentication_error: 'authentication',
  permission_error: 'permission',
  rate_limit_exceeded: 'rate_limit',
  invalid_request_error: 'invalid_request',
  not_found_error: 'not_found',
  payload_too_large: 'payload_too_large',
  unsupported_media_type: 'unsupported_media_type',
  unsupported_parameter: 'unsupported_parameter',
  provider_unavailable: 'provider_unavailable',
  internal_error: 'server',
};

/** The kind for a failed response: the code decides when we know it, else the status. */
export function errorKindFor(status: number, code: string | undefined): ApiErrorKind {
  const byCode = code === undefined ? undefined : KIND_BY_CODE[code];
  if (byCode) return byCode;
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 429) return 'rate_limit';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 415) return 'unsupported_media_type';
  if (status === 422) return 'unsupported_parameter';
  if (status === 503) return 'provider_unavailable';
  if (status >= 500) return 'server';
  return 'invalid_request';
}
