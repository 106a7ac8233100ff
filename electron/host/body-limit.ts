import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/**
 * The host reads a call's body whole before the contract parses it (oRPC does too), so the body
 * is bounded first: 4 MB, as `clipdesk mcp --http` (docs/security.md, "The app's loopback
 * endpoint"). Browser mode's `uploads.fromBytes` carries a dropped file, and gets the upload limit.
 */
export const MAX_CALL_BODY_BYTES = 4_000_000;

/** What a refused body leaves: its limit, for the 413's message. */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`The request body is larger than ${limit} bytes, this endpoint's limit`);
    this.name = 'BodyTooLarge';
    this.limit = limit;
  }
}

/**
 * Reads the body, at most `limit` bytes (a declared length past it is refused before any byte is
 * read). Throws BodyTooLarge; the caller answers 413.
 */
export async function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit);
  // Listeners, not `for await`: leaving a for-await destroys the request, and with it the socket
  // the 413 must still be written to.
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const read: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void read.push(chunk);
      req.off('data', onData);
      req.off('end', onEnd);
      req.pause();
      reject(new BodyTooLarge(limit));
    };
    const onEnd = (): void => resolve(read);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
  return Buffer.concat(chunks);
}

/**
 * The request, bounded for a handler that reads it itself: a declared length is checked and the
 * request passed on as it is (Node's parser ends the body at that length); a body without one
 * (chunked) is read as readBoundedBody does and replayed to the handler by a stand-in.
 */
export async function readBoundedRequest(req: IncomingMessage, limit: number): Promise<IncomingMessage> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared)) {
    if (declared > limit) throw new BodyTooLarge(limit);
    return req;
  }
  const body = await readBoundedBody(req, limit);
  const replay = Readable.from(body.length > 0 ? [body] : []);
  return Object.assign(replay, {
    method: req.method,
    url: req.url,
    headers: req.headers,
    socket: req.socket,
  }) as unknown as IncomingMessage;
}

/**
 * Before a 413 sent mid-body: stop reading (a flood costs nothing more), and close the connection
 * a moment after the answer instead of at once, so a client still sending reads the answer rather
 * than a reset (the service does the same, docs/api.md "Hardening").
 */
export function lingerAfterRefusal(req: IncomingMessage, lingerMs = 2_000): void {
  req.pause();
  const socket = req.socket as Socket & { destroySoon?: () => void };
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
