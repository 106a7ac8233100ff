import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection refused mid-body stays open after its answer (docs/api.md, "Hardening"):
 * time enough for a client that is still sending to read the answer, however loaded its machine.
 */
export const LINGER_MS = 2_000;

/**
 * The answer to a request whose body was not all read goes with `Connection: close`, and Node then
 * ends and destroys the socket as soon as the answer is written. The client's unread bytes are
 * still in our receive buffer, and a socket closed with unread bytes sends a TCP reset instead of
 * a FIN. A client still sending can take that reset on a write before it reads the answer, and
 * loses it (RFC 9112, section 9.6): a proxy in front answers 502 instead of our 413.
 *
 * So the close lingers: the write side ends at once (the client reads the answer, then our FIN,
 * and stops sending), nothing more of the body is read (a flood costs nothing), and the socket is
 * destroyed LINGER_MS later. Call before the answer is sent.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  // Marks the body as being read, so that Node does not drain it at full speed after the answer
  // (it "dumps" a body no one read); the request stays paused, so at most its buffer is read.
  req.pause();
  req.read(0);
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // Node's server closes a `Connection: close` response's socket with destroySoon once the answer
  // is written (its `_http_server`): this one ends the write side and waits.
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
