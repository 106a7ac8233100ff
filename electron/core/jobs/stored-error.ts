import type { JobError } from './state.ts';

/**
 * The names journals written before the app used the service's codes end to end gave a job's
 * failure (docs/architecture.md, "One error vocabulary"). Read once, when a job is loaded; nothing
 * writes them any more. Names not listed (`interrupted`, and the codes themselves) are kept.
 */
const CODE_OF_STORED_KIND: Readonly<Record<string, string>> = {
  authentication: 'authentication_error',
  permission: 'permission_error',
  rate_limit: 'rate_limit_exceeded',
  invalid_request: 'invalid_request_error',
  not_found: 'not_found_error',
  server: 'internal_error',
  network: 'network_error',
  cancelled: 'canceled',
};

/** A job's stored failure (JSON), whichever release wrote it: `{code, message}`, or an older `{kind, message}`. */
export function readStoredJobError(text: string): JobError {
  const stored = JSON.parse(text) as { code?: unknown; kind?: unknown; message?: unknown };
  const name = typeof stored.code === 'string' ? stored.code : typeof stored.kind === 'string' ? stored.kind : '';
  const code = (typeof stored.code === 'string' ? name : (CODE_OF_STORED_KIND[name] ?? name)) as JobError['code'];
  return { code, message: typeof stored.message === 'string' ? stored.message : '' };
}
