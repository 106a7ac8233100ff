import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from '../errors.ts';
import { errorBody, errorEnvelope } from './errors.ts';

/**
 * Seconds a caller told "not ready" (GET /readyz) or "database unavailable" (any route) should wait
 * before asking again.
 */
export const READY_RETRY_AFTER_SECONDS = 5;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, errorBody(error), { ...headers, ...error.headers });
}

/**
 * Node's parser refuses malformed HTTP before any request exists, and by default answers with a
 * bare status line. This answers the same status with the error envelope instead, written straight
 * to the socket (there is no response object), then closes the connection.
 * For the server's 'clientError' event.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Nothing to answer: the client is gone, or a response is already under way on the socket.
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, message] = clientErrorStatus(error.code);
  const text = JSON.stringify(errorEnvelope(status === 413 ? 'payload_too_large' : 'invalid_request_error', message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(text)}\r\n` +
      'cache-control: no-store\r\n' +
      'connection: close\r\n\r\n' +
      text,
  );
}

/** The status Node itself would send for a parser error, and what it means. */
function clientErrorStatus(code: string | undefined): [number, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'request headers are too large'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'chunk extensions are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request was not received in time'];
    default:
      return [400, `malformed HTTP request${code ? ` (${code})` : ''}`];
  }
}

/**
 * `Expect` other than `100-continue`: Node answers a bare 417 unless the server listens for
 * 'checkExpectation'; this answers it with the envelope.
 */
export function answerUnmetExpectation(req: IncomingMessage, res: ServerResponse): void {
  const text = JSON.stringify(
    errorEnvelope('invalid_request_error', `Expect: ${req.headers.expect ?? ''} is not supported (only 100-continue)`),
  );
  res.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(text);
}
