import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import {
  classOfStatus,
  guardedFetch,
  normalizeError,
  redact,
  retryAfterSeconds,
} from '../../../../../server/providers/remote/http.ts';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server that answers every request with `status` and `body`, counting requests. */
async function answering(status: number, body: string, headers: Record<string, string> = {}) {
  let count = 0;
  const server = createServer((_req, res) => {
    count += 1;
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, count: () => count };
}

const KEY = 'sk-live-abcdef0123456789';

function guard() {
  return guardedFetch({
    provider: 'fal',
    name: 'fal',
    apiKey: KEY,
    describe: (failure) =>
      new ProviderError('fal', classOfStatus(failure.status), `fal answered ${failure.status}: ${failure.text}`, {
        retryAfterSeconds: retryAfterSeconds(failure.headers.get('retry-after')) ?? 0,
      }),
  });
}

describe('remote provider HTTP helpers', () => {
  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds('1.2')).toBe(2);
    const inTen = new Date(Date.now() + 10_000).toUTCString();
    expect(retryAfterSeconds(inTen)).toBeGreaterThanOrEqual(9);
    expect(retryAfterSeconds(inTen)).toBeLessThanOrEqual(11);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });

  it('classes statuses', () => {
    expect([401, 403, 429, 500, 503, 400, 422, 404, 402].map(classOfStatus)).toEqual([
      'auth',
      'auth',
      'rate_limited',
      'server',
      'server',
      'invalid_input',
      'invalid_input',
      'invalid_input',
      'failed',
    ]);
  });

  it('takes a key a provider echoes out of the message', async () => {
    const server = await answering(401, JSON.stringify({ detail: `Invalid key ${KEY}` }));
    const fetch = guard();
    const err = await fetch(server.url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).errorClass).toBe('auth');
    expect((err as ProviderError).message).toContain('[redacted]');
    expect((err as ProviderError).message).not.toContain(KEY);
    expect(redact(`a ${KEY} b ${KEY}`, KEY)).toBe('a [redacted] b [redacted]');
  });

  it('answers the SDK’s retries of a failure without sending them again', async () => {
    const server = await answering(429, '{}', { 'retry-after': '3' });
    const fetch = guard();
    const first = await fetch(server.url).catch((e: unknown) => e);
    const second = await fetch(server.url).catch((e: unknown) => e);
    expect(second).toBe(first);
    expect((first as ProviderError).retryAfterSeconds).toBe(3);
    expect(server.count()).toBe(1);
  });

  it('turns a refused connection into a server error and an abort into canceled', async () => {
    const server = await answering(200, '{}');
    const url = server.url;
    await closers.pop()!();
    const refused = await guard()(url).catch((e: unknown) => e);
    expect((refused as ProviderError).errorClass).toBe('server');
    expect((refused as ProviderError).message).toBe('fal could not be reached (ECONNREFUSED)');
    const aborted = AbortSignal.abort();
    const canceled = await guard()(url, { signal: aborted }).catch((e: unknown) => e);
    expect((canceled as ProviderError).errorClass).toBe('canceled');
  });

  it('normalises SDK errors: bad JSON is malformed, others failed without the key', () => {
    expect(normalizeError('replicate', 'Replicate', KEY, new SyntaxError('Unexpected token')).errorClass).toBe(
      'malformed',
    );
    const other = normalizeError('replicate', 'Replicate', KEY, new Error(`boom ${KEY}`));
    expect(other.errorClass).toBe('failed');
    expect(other.message).toBe('Replicate: boom [redacted]');
  });
});
