import type { IpcErrorCode } from '../../shared/ipc/errors.ts';

/**
 * A failure of the app's own, where no service answer is involved (a profile, a key store, a job's
 * state): its code is one of the shell's (shared/ipc/errors.ts), which the IPC sends as is. Errors
 * from the service are ServiceError (core/api/errors.ts); docs/architecture.md has the vocabulary.
 */
export class CoreError extends Error {
  readonly code: IpcErrorCode;
  constructor(code: IpcErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
