import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../../server/errors.ts';
import type { HostLookup } from '../../../../server/net/host-lookup.ts';
import { DEFAULT_WEBHOOK_TIMINGS, backoff } from '../../../../server/webhooks/dispatcher.ts';
import { newWebhookSecret, webhookSecretBytes } from '../../../../server/webhooks/secrets.ts';
import { checkWebhookTarget } from '../../../../server/webhooks/target.ts';
import { WEBHOOK_URL_MAX_CHARS } from '../../../../shared/api/index.ts';

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '169.254.169.254'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
};
const lookup: HostLookup = (host) => {
  const found = DNS[host];
  if (!found) return Promise.reject(new Error(`ENOTFOUND ${host}`));
  return Promise.resolve(found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
};
const strict = { allowPrivate: false, lookup };
const lenient = { allowPrivate: true, lookup };

async function refusal(url: string, policy = strict): Promise<string> {
  const error = await checkWebhookTarget(url, policy).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`${url} was not refused with an ApiError`);
  expect(error.code).toBe('invalid_request_error');
  expect(error.status).toBe(400);
  return error.message;
}

describe('checkWebhookTarget', () => {
  it('accepts public http(s) targets', async () => {
    await expect(checkWebhookTarget('https://hooks.example.com/in?x=1', strict)).resolves.toBe(
      'https://hooks.example.com/in?x=1',
    );
    await expect(checkWebhookTarget('http://93.184.216.34:8080/in', strict)).resolves.toBe(
      'http://93.184.216.34:8080/in',
    );
    await expect(checkWebhookTarget('https://v6.example.com/', strict)).resolves.toBe('https://v6.example.com/');
  });

  it('resolves with the normalized URL, the one stored and delivered to', async () => {
    await expect(checkWebhookTarget('HTTPS://Hooks.Example.COM:443/a/../in', strict)).resolves.toBe(
      'https://hooks.example.com/in',
    );
  });

  it('refuses credentials in the URL, pointing at the webhook signature instead', async () => {
    for (const url of [
      'http://user:s3cret@hooks.example.com/path',
      'https://user@hooks.example.com/',
      'https://:pw@hooks.example.com/',
    ])
      expect(await refusal(url, lenient)).toMatch(/must not carry credentials.*webhook-signature/);
  });

  it('refuses whitespace and control characters anywhere, rather than using a rewritten URL', async () => {
    for (const url of [
      'https://hooks.example.com/crlf\r\nX-Injected: 1',
      'https://hooks.example.com/a b',
      '\thttps://hooks.example.com/',
      'https://hooks.example.com/\u0000',
      'https://hooks.example.com/nbsp\u00a0',
      'https://hooks.example.com/ ',
    ])
      expect(await refusal(url, lenient)).toMatch(/whitespace or control characters/);
  });

  it('refuses what is not an http(s) URL, and URLs over 2,048 characters', async () => {
    for (const url of [
      'ftp://hooks.example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'ws://hooks.example.com',
    ])
      expect(await refusal(url)).toMatch(/must be an http\(s\) URL/);
    for (const url of ['hooks.example.com/in', '', 'http://', '/relative'])
      expect(await refusal(url)).toMatch(/http\(s\)/);
    const long = `https://hooks.example.com/${'a'.repeat(WEBHOOK_URL_MAX_CHARS)}`;
    expect(await refusal(long)).toMatch(/at most 2048 characters/);
    expect(await refusal(long, lenient)).toMatch(/at most 2048 characters/);
    const exact = `https://hooks.example.com/${'a'.repeat(WEBHOOK_URL_MAX_CHARS - 'https://hooks.example.com/'.length)}`;
    expect(exact).toHaveLength(WEBHOOK_URL_MAX_CHARS);
    await expect(checkWebhookTarget(exact, strict)).resolves.toBe(exact);
  });

  it('refuses loopback and private targets, by literal or by resolved address, unless allowed', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://[::1]/hook',
      'http://10.0.0.5/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0/',
    ]) {
      expect(await refusal(url)).toMatch(/must be a public address .*--allow-private-webhooks/);
      await expect(checkWebhookTarget(url, lenient)).resolves.toBeTypeOf('string');
    }
    expect(await refusal('https://internal.example.com/')).toMatch(/resolves to 10\.1\.2\.3/);
    expect(await refusal('https://mixed.example.com/')).toMatch(/resolves to 169\.254\.169\.254/);
    expect(await refusal('https://nowhere.example.com/')).toMatch(/does not resolve/);
    await expect(checkWebhookTarget('https://internal.example.com/', lenient)).resolves.toBeTypeOf('string');
    await expect(checkWebhookTarget('http://localhost:9/', lenient)).resolves.toBeTypeOf('string');
  });
});

describe('backoff', () => {
  const t = { ...DEFAULT_WEBHOOK_TIMINGS, initialBackoffMs: 1_000, maxBackoffMs: 60_000 };
  it('doubles from the first wait, capped, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4].map((n) => backoff(n, t, () => 1))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(backoff(30, t, () => 1)).toBe(60_000);
    expect(backoff(3, t, () => 0)).toBe(2_000);
    expect(backoff(1_000, t, () => 0.5)).toBe(45_000);
  });

  it('with the defaults, retries span about a day before the 24 h limit', () => {
    let at = 0;
    let attempts = 0;
    while (at <= DEFAULT_WEBHOOK_TIMINGS.maxAgeMs) at += backoff(++attempts, DEFAULT_WEBHOOK_TIMINGS, () => 1);
    expect(attempts).toBeGreaterThan(20);
    expect(attempts).toBeLessThan(40);
  });
});

describe('signing secrets', () => {
  it('are whsec_ and the base64 of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(webhookSecretBytes(a)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
