import { isServiceError } from '../core/api/index.ts';
import { KeyStoreChoiceError, SecretStoreUnavailableError } from '../core/secrets/index.ts';

/** Exit codes of `clipdesk` (README.md, "CLI cheat-sheet"). */
export const EXIT = { ok: 0, unexpected: 1, usage: 2, auth: 3, rateLimited: 4, service: 5 } as const;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The exit code and the one line to print for a failure. */
export function describeFailure(error: unknown): { code: number; line: string } {
  if (error instanceof UsageError || error instanceof KeyStoreChoiceError)
    return { code: EXIT.usage, line: error.message };
  if (isServiceError(error)) {
    if (error.code === 'authentication_error' || error.code === 'permission_error')
      return { code: EXIT.auth, line: error.message };
    if (error.code === 'rate_limit_exceeded') {
      // The service's message already says how long to wait ("… Retry after 52 seconds."); only a
      // message that does not gets the wait added, so it is said once.
      const says = /retry after/i.test(error.message);
      const s = error.retryAfter === 1 ? '' : 's';
      if (says || error.retryAfter === undefined) return { code: EXIT.rateLimited, line: error.message };
      const line = `${error.message.replace(/\.?$/, '.')} Retry after ${error.retryAfter} second${s}.`;
      return { code: EXIT.rateLimited, line };
    }
    return { code: EXIT.service, line: error.message };
  }
  if (error instanceof SecretStoreUnavailableError) return { code: EXIT.unexpected, line: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: EXIT.unexpected, line: message.split('\n')[0] ?? message };
}
