/**
 * Why a render failed, so the service can answer correctly: bad input is the client's error and
 * no other provider would do better (no fallback); a provider failure is worth a fallback.
 */
export type RenderErrorCode =
  /** The request's input cannot be used (e.g. a start image that does not decode). */
  | 'invalid_input'
  /** The provider does not offer this model, size or feature. */
  | 'unsupported'
  /** The provider failed (ffmpeg error, output check failed, or a simulated outage). */
  | 'provider_failure'
  /** The caller's signal aborted the render. */
  | 'aborted';

export class RenderError extends Error {
  readonly code: RenderErrorCode;
  /** True when another provider may succeed where this one failed. */
  readonly retryable: boolean;
  constructor(code: RenderErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RenderError';
    this.code = code;
    this.retryable = code === 'provider_failure';
  }
}

export function isRenderError(err: unknown): err is RenderError {
  return err instanceof RenderError;
}
