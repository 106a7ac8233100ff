import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIpcRouter } from '../../../../electron/app/router.ts';
import { MAX_CALL_BODY_BYTES } from '../../../../electron/host/body-limit.ts';
import { startHost, type Host } from '../../../../electron/host/server.ts';
import { stubHandlers } from '../../../support/ipc-handlers.ts';

/**
 * The app's loopback endpoint (docs/security.md) reads a call's body whole: past 4 MB it answers
 * 413 and reads no more, as `clipdesk mcp --http` does.
 */
let host: Host;
let calls = 0;

beforeAll(async () => {
  host = await startHost({
    router: createIpcRouter(
      stubHandlers({
        app: {
          info: (_input, ctx) => {
            calls += 1;
            return {
              name: 'Clipdesk',
              version: '0',
              mode: 'browser',
              dataDir: '/',
              capabilities: { pathUploads: false, revealInFolder: false, pickDirectory: false, osNotifications: false },
              platform: ctx.transport,
            };
          },
        },
      }),
    ),
  });
});
afterAll(() => host.close());

/** A call to app.info whose JSON body is exactly `size` bytes, sent with or without its length. */
function call(size: number, chunked: boolean): Promise<{ status: number; body: string }> {
  const head = '{"pad":"';
  const tail = '"}';
  const body = `${head}${'x'.repeat(size - head.length - tail.length)}${tail}`;
  expect(Buffer.byteLength(body)).toBe(size);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: host.port,
        path: '/rpc/app/info',
        method: 'POST',
        headers: {
          host: `127.0.0.1:${host.port}`,
          cookie: `clipdesk_${host.port}=${host.secret}`,
          'content-type': 'application/json',
          ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(size) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    if (chunked) {
      // In pieces, as a client that streams: the limit holds without a declared length.
      for (let at = 0; at < body.length; at += 1_000_000) req.write(body.slice(at, at + 1_000_000));
      req.end();
    } else req.end(body);
  });
}

describe("the app's loopback endpoint: a bounded body", () => {
  it('takes a body of exactly 4 MB', async () => {
    expect(MAX_CALL_BODY_BYTES).toBe(4_000_000);
    const before = calls;
    for (const chunked of [false, true]) {
      const res = await call(MAX_CALL_BODY_BYTES, chunked);
      expect(res.status, res.body.slice(0, 200)).toBe(200);
    }
    expect(calls).toBe(before + 2);
  });

  it('refuses one byte more with 413 and says why, declared or streamed', async () => {
    const before = calls;
    for (const chunked of [false, true]) {
      const res = await call(MAX_CALL_BODY_BYTES + 1, chunked);
      expect(res.status, res.body).toBe(413);
      expect(JSON.parse(res.body)).toEqual({
        code: 'payload_too_large',
        message: "The request body is larger than 4000000 bytes, this endpoint's limit",
      });
    }
    expect(calls).toBe(before);
  });
});
