import { mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createORPCClient, ORPCError } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { EventBus } from '../../../../electron/app/events.ts';
import { createIpcRouter } from '../../../../electron/app/router.ts';
import { stubHandlers } from '../../../support/ipc-handlers.ts';
import { startHost, type Host } from '../../../../electron/host/server.ts';
import type { IpcClient } from '../../../../shared/ipc/client.ts';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Raw HTTP, so Host and Origin can be set to anything (fetch would not let us). */
function raw(
  port: number,
  pathAndQuery: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: pathAndQuery, method: init.method ?? 'GET', headers: init.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

let dir: string;
let host: Host;
let cookie: string;
let client: IpcClient;
const bus = new EventBus();

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-host-'));
  await mkdir(path.join(dir, 'static'));
  await writeFile(path.join(dir, 'static', 'index.html'), '<!doctype html><title>t</title>');
  await mkdir(path.join(dir, 'downloads', 'sub'), { recursive: true });
  await writeFile(path.join(dir, 'downloads', 'sub', 'clip.mp4'), Buffer.alloc(1000, 7));
  await writeFile(path.join(dir, 'secret.txt'), 'outside');
  await symlink(path.join(dir, 'secret.txt'), path.join(dir, 'downloads', 'escape.mp4'));
  const handlers = stubHandlers({
    app: {
      info: (_input, ctx) => ({
        name: 'Clipdesk',
        version: '0',
        mode: 'browser',
        dataDir: dir,
        capabilities: { pathUploads: false, revealInFolder: false, pickDirectory: false, osNotifications: false },
        // Echoes the binding's context: the transport says which binding answered.
        platform: ctx.transport,
      }),
    },
    profiles: { keyStatus: ({ id }) => ({ hasKey: id === 'p1', last4: 'abcd', backend: 'keychain' }) },
    events: { subscribe: (input, ctx) => bus.stream(ctx.signal, input?.types) },
  });
  host = await startHost({
    router: createIpcRouter(handlers),
    staticDir: path.join(dir, 'static'),
    mediaRoots: () => ({ downloads: path.join(dir, 'downloads') }),
  });
  cookie = `clipdesk_${host.port}=${host.secret}`;
  client = createORPCClient(new RPCLink({ url: `${host.origin}/rpc`, headers: { cookie } }));
});

afterAll(async () => {
  await host.close();
  await rm(dir, { recursive: true, force: true });
});

describe('browser-mode host: the gate', () => {
  it('listens on loopback only, and refuses to bind anything else', async () => {
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?t=/);
    await expect(
      startHost({
        router: createIpcRouter(stubHandlers({})),
        staticDir: dir,
        mediaRoots: () => ({}),
        host: '0.0.0.0',
      }),
    ).rejects.toThrow(/loopback/);
  });

  it('no secret → 401, on every path', async () => {
    for (const p of ['/', '/index.html', '/rpc/app/info', '/local-media/downloads/sub/clip.mp4']) {
      expect((await raw(host.port, p, { method: p.startsWith('/rpc') ? 'POST' : 'GET' })).status).toBe(401);
    }
    expect((await raw(host.port, '/?t=wrong')).status).toBe(401);
    expect((await raw(host.port, '/', { headers: { cookie: `clipdesk_${host.port}=nope` } })).status).toBe(401);
  });

  it('an old or mistyped link opened in a browser: a page that says so in words, not raw JSON', async () => {
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const page = await raw(host.port, '/?t=old', { headers: { accept } });
    expect(page.status).toBe(401);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('This address needs the link printed at launch.');
    expect(page.body).not.toContain('authentication_error');
    // Calls that read JSON still get JSON.
    const call = await raw(host.port, '/rpc/app/info', { method: 'POST', headers: { accept } });
    expect(JSON.parse(call.body)).toMatchObject({ code: 'authentication_error' });
  });

  it('the secret in the query becomes an HttpOnly cookie and leaves the URL', async () => {
    const r = await raw(host.port, `/?t=${host.secret}`);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/');
    expect(String(r.headers['set-cookie'])).toMatch(
      new RegExp(`^clipdesk_${host.port}=${host.secret}; HttpOnly; SameSite=Strict`),
    );
    const page = await raw(host.port, '/', { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-eval/);
  });

  it('a foreign Host (DNS rebinding) or Origin → 403, even with the secret', async () => {
    expect((await raw(host.port, '/', { headers: { cookie, host: `evil.test:${host.port}` } })).status).toBe(403);
    expect((await raw(host.port, '/', { headers: { cookie, host: '127.0.0.1:1' } })).status).toBe(403);
    const post = { method: 'POST', body: '{}', headers: { cookie, 'content-type': 'application/json' } };
    expect(
      (await raw(host.port, '/rpc/app/info', { ...post, headers: { ...post.headers, origin: 'http://evil.test' } }))
        .status,
    ).toBe(403);
    expect(
      (await raw(host.port, '/rpc/app/info', { ...post, headers: { ...post.headers, origin: 'null' } })).status,
    ).toBe(403);
    expect(
      (await raw(host.port, '/rpc/app/info', { ...post, headers: { ...post.headers, 'sec-fetch-site': 'cross-site' } }))
        .status,
    ).toBe(403);
    expect(
      (await raw(host.port, '/rpc/app/info', { ...post, headers: { ...post.headers, origin: host.origin } })).status,
    ).toBe(200);
  });
});

describe('browser-mode host: the contract over HTTP', () => {
  it('answers a route through the typed client', async () => {
    const info = await client.app.info();
    expect(info.mode).toBe('browser');
    expect(info.platform).toBe('http');
    await expect(client.profiles.keyStatus({ id: 'p1' })).resolves.toEqual({
      hasKey: true,
      last4: 'abcd',
      backend: 'keychain',
    });
  });

  it('unknown routes and prototype keys → 404 not_found', async () => {
    for (const p of [
      '/rpc/nope/x',
      '/rpc/__proto__/toString',
      '/rpc/app/__proto__',
      '/rpc/constructor/name',
      '/rpc/app/info/x',
      '/rpc',
    ]) {
      const r = await raw(host.port, p, {
        method: 'POST',
        body: '{}',
        headers: { cookie, 'content-type': 'application/json' },
      });
      expect(r.status, p).toBe(404);
    }
  });

  it('invalid input → invalid_input with issues', async () => {
    const err = (await client.profiles.keyStatus({ id: '' }).catch((e: unknown) => e)) as ORPCError<
      string,
      { issues: unknown[] }
    >;
    expect(err).toBeInstanceOf(ORPCError);
    expect(err.code).toBe('invalid_input');
    expect(err.status).toBe(400);
    expect(err.data.issues[0]).toMatchObject({ path: 'id' });
  });

  it("a handler's typed error reaches the client with its code", async () => {
    const err = (await client.jobs.list().catch((e: unknown) => e)) as ORPCError<string, unknown>;
    expect(err.code).toBe('not_available');
    expect(err.message).toMatch(/jobs\.list is not stubbed/);
  });

  it('routes are POST only', async () => {
    expect((await raw(host.port, '/rpc/app/info', { headers: { cookie } })).status).toBe(405);
  });

  it('streams events', async () => {
    const controller = new AbortController();
    const stream = await client.events.subscribe({ types: ['library.changed'] }, { signal: controller.signal });
    const got = (async () => {
      for await (const ev of stream) return ev;
      return null;
    })();
    // The subscription is registered once the server has started the stream.
    while (bus.subscriberCount === 0) await new Promise((r) => setTimeout(r, 5));
    bus.publish({ type: 'settings.changed' });
    bus.publish({ type: 'library.changed', change: { reason: 'sync', ids: ['a'] } });
    await expect(got).resolves.toEqual({ type: 'library.changed', change: { reason: 'sync', ids: ['a'] } });
    controller.abort();
  });
});

describe('browser-mode host: local media', () => {
  it('serves a file under a root, with Range', async () => {
    const full = await raw(host.port, '/local-media/downloads/sub/clip.mp4', { headers: { cookie } });
    expect(full.status).toBe(200);
    expect(full.headers['content-type']).toBe('video/mp4');
    const part = await raw(host.port, '/local-media/downloads/sub/clip.mp4', {
      headers: { cookie, range: 'bytes=10-19' },
    });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 10-19/1000');
  });

  it.each([
    '/local-media/downloads/../secret.txt',
    '/local-media/downloads/%2e%2e/secret.txt',
    '/local-media/downloads/sub/..%2f..%2fsecret.txt',
    '/local-media/downloads/..%5csecret.txt',
    '/local-media/downloads/escape.mp4',
    '/local-media/elsewhere/secret.txt',
    '/local-media/__proto__/x',
    '/%2e%2e/secret.txt',
    '/../secret.txt',
  ])('refuses %s', async (p) => {
    const r = await raw(host.port, p, { headers: { cookie } });
    expect([403, 404]).toContain(r.status);
    expect(r.body).not.toContain('outside');
  });
});
