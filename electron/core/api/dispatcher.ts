import { Agent } from 'undici';
import type { Dispatcher } from 'undici';

/**
 * The client's own connection pool. undici's global dispatcher cuts a response off after 300 s
 * without headers or body bytes; a generation can take longer than that, so both timeouts are
 * off here and every request carries an AbortSignal for cancelling and for its deadline instead.
 */
export function createApiDispatcher(options: { connections?: number } = {}): Dispatcher {
  return new Agent({
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: 15_000,
    keepAliveTimeout: 10_000,
    connections: options.connections ?? 16,
  });
}
