import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { CONTENT_LIMITS } from '../../../shared/api/index.ts';
import { JSON_MAX_DEPTH } from '../../../server/http/body.ts';
import { generated, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

let t: TestService;
let c: TestClient;
let port = 0;
beforeAll(async () => {
  // nodes: 1: raw sockets test a node's own HTTP parser and body limits; a proxy adds its own and its buffers.
  t = await startTestService({ nodes: 1 });
  c = await t.client('hardened', 'pro');
  port = t.service.port;
});
afterAll(async () => {
  await t.stop();
});

/** An object nested `depth` levels deep, the outermost included. */
function nested(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

/** Sends raw bytes on a fresh connection and collects what comes back until the server closes. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.write(text);
  });
}

function parseRaw(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
    headers: head.toLowerCase(),
    body: JSON.parse(text.slice(split + 4)) as Record<string, unknown>,
  };
}

/**
 * Sends `head`, then `chunk` over and over (respecting backpressure) until `max` bytes or until the
 * server closes. Resolves with what came back and how many body bytes the socket took.
 */
function flood(
  head: string,
  chunk: Buffer,
  max: number,
  chunked: boolean,
): Promise<{ reply: string; written: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    let written = 0;
    let closed = false;
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is expected
    socket.on('close', () => {
      closed = true;
      resolve({ reply, written });
    });
    const frame = chunked
      ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      : chunk;
    const pump = (): void => {
      while (!closed && written < max) {
        written += chunk.length;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!closed) socket.end(chunked ? '0\r\n\r\n' : '');
    };
    socket.write(head, pump);
  });
}

/**
 * Sends `head` and a chunked body three times the JSON limit, without its end, as a client does
 * that is still streaming when the refusal comes; after the answer and the server's FIN, it sends
 * three more chunks, one after the other, as a client (or a proxy) does that has not yet seen the
 * answer. Resolves with the answer and what became of those writes: `accepted`, or the error of the
 * first that failed (a reset from a server that closed on unread bytes).
 */
function stillSendingAfterRefusal(head: string): Promise<{ reply: string; writesAfter: string }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const data = Buffer.alloc(16 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    let reply = '';
    let settled = false;
    const settle = (writesAfter: string): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ reply, writesAfter });
    };
    const writeAfter = (left: number): void => {
      if (left === 0) settle('accepted');
      else socket.write(chunk, (error) => (error ? undefined : writeAfter(left - 1)));
    };
    socket.on('data', (d: Buffer) => (reply += d.toString('latin1')));
    socket.once('end', () => writeAfter(3));
    socket.on('error', (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
    socket.write(head + chunk.toString('latin1').repeat(12), 'latin1');
  });
}

const FLOOD = 120 << 20;
/** More than loopback's socket buffers (client send + server receive) can hold. */
const BUFFERS = 8 << 20;

describe('JSON bodies nest at most 32 levels', () => {
  it.each([
    ['without', {}],
    ['with', { 'idempotency-key': 'depth-32' }],
  ])('exactly 32 is read, %s an Idempotency-Key', async (_w, headers) => {
    expect(JSON_MAX_DEPTH).toBe(32);
    const body = `{"model":"clipdesk/still","prompt":"deep","size":"64x64","extra":${nested(JSON_MAX_DEPTH - 1)}}`;
    const res = await c.call('POST', '/images/generations', body, headers);
    expect(res.status).toBe(200);
  });

  it.each([
    ['without', {}],
    ['with', { 'idempotency-key': 'depth-33' }],
  ])('33 and far deeper are 400, %s an Idempotency-Key', async (_w, headers) => {
    for (const extra of [nested(JSON_MAX_DEPTH), '['.repeat(30_000) + ']'.repeat(30_000)]) {
      const body = `{"model":"clipdesk/still","prompt":"deep","size":"64x64","extra":${extra}}`;
      const res = await c.call('POST', '/images/generations', body, headers);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'invalid_request_error',
        message: expect.stringMatching(/deeper than 32/),
      });
    }
  });

  it('brackets inside strings do not count', async () => {
    const res = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: '[[[[{{{{'.repeat(20) + '"\\',
      size: '64x64',
    });
    expect(res.status).toBe(200);
  });
});

describe('methods and paths', () => {
  it('an unknown method on a known path is 405 with Allow, after authentication', async () => {
    const res = await c.call('DELETE', '/models');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.body).toMatchObject({ success: false, code: 'method_not_allowed' });
    const post = await c.call('PUT', '/videos/generations', {});
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('POST');
    expect((await fetch(`${t.service.url}/models`, { method: 'DELETE' })).status).toBe(401);
  });

  it('on a key-less path (the OpenAPI document) 405 needs no key', async () => {
    const res = await fetch(`${t.service.url}/openapi.json`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('an unknown path under /v1 is 401 without a key and 404 with one', async () => {
    const anon = await fetch(`${t.service.url}/admin/secrets`);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { code: string }).code).toBe('authentication_error');
    const keyed = await c.call('GET', '/admin/secrets');
    expect(keyed.status).toBe(404);
    expect(keyed.body.code).toBe('not_found_error');
  });
});

describe('POST /media/:id/retain', () => {
  it('needs the generate or upload permission; a read-only key gets 403', async () => {
    const made = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'keep',
      size: '64x64',
    });
    const id = generated(made.body)[0]!.id;
    const reader = await t.client('hardened', 'pro', ['read']);
    const refused = await reader.call('POST', `/media/${id}/retain`, { forever: true });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('permission_error');
    expect((await reader.call('GET', `/media/${id}`)).body.result.expiresAt).not.toBeNull();
    for (const permissions of [['upload'], ['generate']] as const) {
      const writer = await t.client('hardened', 'pro', [...permissions]);
      expect((await writer.call('POST', `/media/${id}/retain`, { days: 1 })).status).toBe(200);
    }
  });

  it("another account's public item: 403 with the spec's message, the reason in details", async () => {
    const made = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'mine',
      size: '64x64',
    });
    const id = generated(made.body)[0]!.id;
    const stranger = await t.client('stranger', 'pro');
    const refused = await stranger.call('POST', `/media/${id}/retain`, { forever: true });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: 'permission_error',
      message: 'API key does not have permission to access this resource',
      details: 'only the owner can extend retention of an item',
    });
  });
});

describe('errors carry OpenAI’s error object beside the spec’s fields', () => {
  it('on every kind of error', async () => {
    const res = await c.call('GET', '/media/med_000000000000000000000000');
    expect(res.body).toEqual({
      success: false,
      message: res.body.message,
      code: 'not_found_error',
      error: { message: res.body.message, type: 'not_found_error', code: 'not_found_error' },
    });
  });
});

describe('malformed HTTP gets the error envelope', () => {
  it.each([
    ['a header line without a colon', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 400],
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n', 400],
    ['headers over 16 KiB', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    [
      'an Expect other than 100-continue',
      'POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}',
      417,
    ],
  ])('%s', async (_name, text, status) => {
    const res = parseRaw(await raw(text));
    expect(res.status).toBe(status);
    expect(res.headers).toContain('content-type: application/json');
    expect(res.body).toMatchObject({ success: false, code: expect.any(String), message: expect.any(String) });
    expect(res.body['error']).toMatchObject({ message: res.body['message'] });
  });
});

describe('a body past its limit is answered 413 at once, not read to the end', () => {
  it('a chunked JSON body', async () => {
    const head =
      'POST /v1/images/generations HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${c.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const { reply, written } = await flood(head, Buffer.alloc(64 * 1024, 0x20), FLOOD, true);
    expect(parseRaw(reply).status).toBe(413);
    // What the socket took is the limit plus what fits in the kernel's buffers, not the flood.
    expect(written).toBeLessThan(BUFFERS);
  });

  it('the unused body of an upload completion', async () => {
    const head =
      'POST /v1/media/upl_0123456789abcdef0123 HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${c.key}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const { reply, written } = await flood(head, Buffer.alloc(64 * 1024, 0x20), FLOOD, true);
    expect(parseRaw(reply).status).toBe(413);
    expect(written).toBeLessThan(BUFFERS);
  });

  it('a client still sending reads the refusal and an orderly close, not a reset', async () => {
    const head =
      'POST /v1/images/generations HTTP/1.1\r\nHost: x\r\n' +
      `Authorization: Bearer ${c.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const { reply, writesAfter } = await stillSendingAfterRefusal(head);
    expect(parseRaw(reply).status).toBe(413);
    // The server lingers after its answer (docs/api.md, "Hardening"): what the client still sends
    // is taken (and not read), where a socket closed at once would have answered it with a reset.
    expect(writesAfter).toBe('accepted');
  });

  it('an upload past its signed size', async () => {
    // A large signed size: the refusal comes with writes to the file still in flight.
    const size = CONTENT_LIMITS.uploadImageBytes;
    const tk = await c.call('POST', '/media/upload', { filename: 'a.png', mime: 'image/png', size });
    const url = new URL(tk.body.result.uploadUrl as string);
    const head = `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const png = Buffer.alloc(64 * 1024);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
    const { reply, written } = await flood(head, png, FLOOD, true);
    const res = parseRaw(reply);
    expect(res.status).toBe(413);
    expect(res.body['code']).toBe('payload_too_large');
    expect(written).toBeLessThan(size + BUFFERS);
  });
});
