import { afterEach, describe, expect, it, vi } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startMcpHttp } from '../../../../electron/mcp/http.ts';
import type { McpHttpHost } from '../../../../electron/mcp/http.ts';

/**
 * `clipdesk mcp --http` keeps a bounded number of sessions and closes idle ones (docs/agents.md):
 * a flood of `initialize` requests cannot grow the process without end.
 */
let host: McpHttpHost | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await host?.close();
  host = undefined;
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

async function start(options: { maxSessions?: number; idleMs?: number; now?: () => number }): Promise<McpHttpHost> {
  host = await startMcpHttp({
    port: 0,
    newServer: () => new McpServer({ name: 'test', version: '1.0.0' }),
    onError: () => undefined,
    ...options,
  });
  return host;
}

async function post(h: McpHttpHost, body: unknown, session?: string): Promise<Response> {
  const res = await fetch(h.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${h.secret}`,
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body: JSON.stringify(body),
  });
  await res.text();
  return res;
}

async function initialize(h: McpHttpHost): Promise<string> {
  const res = await post(h, INIT);
  expect(res.status).toBe(200);
  return res.headers.get('mcp-session-id')!;
}

const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

describe('MCP sessions over --http', () => {
  it('refuses a session past the cap with a clear error, and takes one again once another closes', async () => {
    const h = await start({ maxSessions: 3 });
    const ids = [await initialize(h), await initialize(h), await initialize(h)];
    const res = await fetch(h.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${h.secret}`,
      },
      body: JSON.stringify(INIT),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/^Too many MCP sessions: 3 are open\. Close one/);
    // The open ones still answer.
    expect((await post(h, PING, ids[0])).status).toBe(200);
    const closed = await fetch(h.url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${h.secret}`, 'mcp-session-id': ids[1]! },
    });
    expect(closed.status).toBe(200);
    expect(await initialize(h)).toBeTruthy();
  });

  it('holds the cap when initializes arrive together', async () => {
    const h = await start({ maxSessions: 2 });
    const statuses = await Promise.all(Array.from({ length: 6 }, () => post(h, INIT).then((r) => r.status)));
    expect(statuses.sort()).toEqual([200, 200, 503, 503, 503, 503]);
  });

  it('closes a session idle for longer than the limit, on its timer, and its id is then unknown', async () => {
    let clock = 1_000_000;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const h = await start({ idleMs: 60_000, now: () => clock });
    const idle = await initialize(h);
    clock += 30_000;
    const busy = await initialize(h);
    clock += 40_000;
    expect((await post(h, PING, busy)).status).toBe(200);
    // The sweep runs on an unref'd interval; the idle session is 70 s old, the busy one was just seen.
    vi.advanceTimersByTime(60_000);
    expect((await post(h, PING, idle)).status).toBe(404);
    expect((await post(h, PING, busy)).status).toBe(200);
  });

  it('an idle session makes room for a new client at the cap', async () => {
    let clock = 0;
    const h = await start({ maxSessions: 1, idleMs: 60_000, now: () => clock });
    const first = await initialize(h);
    expect((await post(h, INIT)).status).toBe(503);
    clock += 61_000;
    expect(await initialize(h)).toBeTruthy();
    expect((await post(h, PING, first)).status).toBe(404);
  });
});

describe('MCP over --http: a bounded body', () => {
  /** An initialize request whose JSON body is exactly `size` bytes. */
  function initOfSize(size: number): string {
    const empty = JSON.stringify({ ...INIT, params: { ...INIT.params, _meta: { pad: '' } } });
    const body = JSON.stringify({
      ...INIT,
      params: { ...INIT.params, _meta: { pad: 'x'.repeat(size - empty.length) } },
    });
    expect(Buffer.byteLength(body)).toBe(size);
    return body;
  }
  const send = (h: McpHttpHost, body: string) =>
    fetch(h.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${h.secret}`,
      },
      body,
    });

  it('takes exactly 4 MB, and answers one byte more with 413 and why', async () => {
    const h = await start({});
    const at = await send(h, initOfSize(4_000_000));
    await at.text();
    expect(at.status).toBe(200);
    const over = await send(h, initOfSize(4_000_001));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toBe(
      "The request body is larger than 4000000 bytes, this endpoint's limit",
    );
  });
});
