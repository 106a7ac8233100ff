import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, openTestDatabase, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

const ENDPOINTS: Array<[string, string]> = [
  ['GET', '/media'],
  ['POST', '/videos/generations'],
  ['POST', '/images/generations'],
  ['POST', '/media/upload'],
  ['GET', '/models'],
  ['GET', '/models/clipdesk/motion'],
  ['GET', '/providers'],
  ['GET', '/providers/swift'],
  ['GET', '/usage'],
  ['GET', '/media/med_000000000000000000000000/content'],
];

/** The spec's body, with OpenAI's error object beside it. */
function authError(message: string) {
  return {
    success: false,
    message,
    code: 'authentication_error',
    error: { message, type: 'authentication_error', code: 'authentication_error' },
  };
}

describe('authentication (spec table)', () => {
  it.each(ENDPOINTS)('%s %s without a key is 401 "API key is missing"', async (method, path) => {
    const res = await fetch(`${t.service.url}${path}`, { method });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(authError('API key is missing'));
  });

  it.each(ENDPOINTS)('%s %s with an unknown key is 401 "Invalid API key"', async (method, path) => {
    const res = await clientFor(t.service.url, 'cdsk_0123456789abcdef_' + 'A'.repeat(43)).call(method, path);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(authError('Invalid API key'));
  });

  it('a malformed Authorization header counts as missing, garbage as invalid', async () => {
    const res = await fetch(`${t.service.url}/models`, { headers: { authorization: 'Basic abc' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toBe('API key is missing');
    const bad = await clientFor(t.service.url, 'not-a-key').call('GET', '/models');
    expect(bad.body.message).toBe('Invalid API key');
  });

  it('a revoked key is invalid', async () => {
    const c = await t.client('revoker');
    expect((await c.call('GET', '/models')).status).toBe(200);
    await t.service.revokeKey(c.keyId);
    const res = await c.call('GET', '/models');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(authError('Invalid API key'));
  });

  it('a key without the permission gets 403 permission_error', async () => {
    const reader = await t.client('reader', 'pro', ['read']);
    for (const [method, path] of [
      ['POST', '/videos/generations'],
      ['POST', '/images/generations'],
      ['POST', '/media/upload'],
    ] as const) {
      const res = await reader.call(method, path, { model: 'clipdesk/motion', prompt: 'x' });
      expect(res.status).toBe(403);
      const message = 'API key does not have permission to access this resource';
      expect(res.body).toEqual({
        success: false,
        message,
        code: 'permission_error',
        error: { message, type: 'permission_error', code: 'permission_error' },
      });
    }
    const writer = await t.client('writer', 'pro', ['generate']);
    const res = await writer.call('GET', '/media');
    expect(res.status).toBe(403);
    expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
  });

  it('keys are stored only as SHA-256 hashes', async () => {
    const c = await t.client('hashed');
    const db = await openTestDatabase(t.dataDir);
    try {
      const rows = await db.all<Record<string, unknown>>('SELECT * FROM api_keys');
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(c.key);
      const row = rows.find((r) => r['id'] === c.keyId)!;
      expect(row['hash']).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await db.close();
    }
  });

  it('every counted response carries the rate-limit headers; unknown routes are 404', async () => {
    const c = await t.client('headers');
    // Not counted, so without the headers (docs/api.md, "What counts against the rate limits").
    expect((await c.call('GET', '/usage')).headers.get('x-ratelimit-limit')).toBeNull();
    for (const path of ['/models', '/providers', '/media', '/models/nope/nope']) {
      const res = await c.call('GET', path);
      expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(t.clock.now() / 1000);
    }
    const missing = await c.call('GET', '/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found_error');
  });
});
