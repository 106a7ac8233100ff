import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { clientFor, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

/**
 * The whole path of asynchronous mode (docs/workflows.md): an asynchronous generation with a `webhook_url` ends, and its final
 * record arrives at the receiver signed the Standard Webhooks way with the key's own secret.
 */
let t: TestService | undefined;
afterAll(async () => {
  await t?.stop();
});

describe('an asynchronous generation with a webhook', () => {
  it('delivers the final generation, signed with the key’s secret, to the receiver', async () => {
    const received: Array<{ body: string; headers: Record<string, string> }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ body, headers: req.headers as Record<string, string> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/clipdesk`;
    try {
      // A loopback receiver: the operator's flag allows it (as the embedded engine does).
      t ??= await startTestService({ allowPrivateWebhooks: true });
      const made = await t.service.createKey({ user: 'wren', tier: 'enterprise' });
      expect(made.webhookSecret).toMatch(/^whsec_/);
      const c = clientFor(t.service.url, made.key);
      const res = await c.call(
        'POST',
        '/images/generations',
        { model: 'clipdesk/still', prompt: 'a kite over dunes', size: '256x256', webhook_url: target },
        { Prefer: 'respond-async' },
      );
      expect(res.status).toBe(202);
      const id = res.body.result.id as string;
      for (let i = 0; i < 400 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(received).toHaveLength(1);
      const delivery = received[0]!;
      // Throws unless the signature is the key's, over this exact body and timestamp.
      const event = new Webhook(made.webhookSecret).verify(delivery.body, delivery.headers) as {
        type: string;
        data: { id: string; status: string; data: unknown[] };
      };
      expect(event.type).toBe('generation.succeeded');
      expect(event.data).toMatchObject({ id, status: 'succeeded' });
      expect(event.data.data).toHaveLength(1);
      // The same record the API gives.
      const record = await c.call('GET', `/generations/${id}`);
      expect(record.body.result.status).toBe('succeeded');
      const listed = await c.call('GET', '/webhooks/deliveries');
      expect(listed.body.result.deliveries[0]).toMatchObject({ state: 'delivered' });
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  it('refuses credentials, whitespace and control characters in URL fields; stores and shows the normalized URL', async () => {
    t ??= await startTestService({ allowPrivateWebhooks: true });
    const c = clientFor(t.service.url, (await t.service.createKey({ user: 'quill', tier: 'enterprise' })).key);
    const request = { model: 'clipdesk/still', prompt: 'a kite over dunes', size: '256x256' };
    const async = { Prefer: 'respond-async' };
    const withCredentials = await c.call(
      'POST',
      '/images/generations',
      { ...request, webhook_url: 'http://user:s3cret@127.0.0.1:9/path' },
      async,
    );
    expect(withCredentials.status).toBe(400);
    expect(withCredentials.body.message).toMatch(/credentials.*webhook-signature/);
    expect(JSON.stringify(withCredentials.body)).not.toContain('s3cret');
    for (const [field, value] of [
      ['webhook_url', 'http://127.0.0.1:9/crlf\r\nX-Injected: 1'],
      ['webhook_url', 'http://127.0.0.1:9/a\tb'],
      ['image_url', 'http://127.0.0.1:9/start.png\n'],
      ['image_url', 'http://127.0.0.1:9/start png'],
    ] as const) {
      const res = await c.call('POST', '/videos/generations', {
        model: 'clipdesk/motion',
        prompt: 'a kite',
        [field]: value,
      });
      expect(res.status, `${field} ${JSON.stringify(value)}`).toBe(400);
      expect(res.body.message).toContain(`${field} must not contain whitespace or control characters`);
    }
    const accepted = await c.call(
      'POST',
      '/images/generations',
      { ...request, webhook_url: 'HTTP://127.0.0.1:9/a/../hook' },
      async,
    );
    expect(accepted.status).toBe(202);
    expect(accepted.body.result.webhookUrl).toBe('http://127.0.0.1:9/hook');
    const record = await c.call('GET', `/generations/${accepted.body.result.id as string}`);
    expect(record.body.result.webhookUrl).toBe('http://127.0.0.1:9/hook');
  });
});
