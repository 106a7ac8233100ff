import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTING_MODES, RoutingPreviewResponse } from '../../../shared/api/index.ts';
import type { ClipdeskModelRecord as ModelRecord, RoutingPreview } from '../../../shared/api/index.ts';
import { makePng, single, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * `POST /routing/preview` on the real Local engine: the row of the body's own routing mode names
 * the provider and price its submit then gets, for every model × mode × start frame.
 */
let t: TestService;
let c: TestClient;
let image = '';
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('previewer', 'enterprise');
  const png = await readFile(await makePng(t.dataDir, 'start.png'));
  const ticket = await c.call('POST', '/media/upload', { filename: 'start.png', mime: 'image/png', size: png.length });
  const put = await fetch(String(ticket.body.result.uploadUrl), {
    method: 'PUT',
    body: new Uint8Array(png),
    headers: ticket.body.result.headers as Record<string, string>,
  });
  expect(put.status).toBe(200);
  image = single((await c.call('POST', `/media/${ticket.body.result.id}`)).body).url;
});
afterAll(async () => {
  await t.stop();
});

async function preview(body: unknown): Promise<RoutingPreview> {
  const res = await c.call('POST', '/routing/preview', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return RoutingPreviewResponse.parse(res.body).result;
}

async function spent(): Promise<number> {
  const res = await c.call('GET', '/usage');
  return (res.body as { result: { usage: { cost: { total: number } } } }).result.usage.cost.total;
}

describe('the preview names what the submit gets', () => {
  it('for every Local-engine model × routing mode × start frame (the smallest render of each)', async () => {
    const models = ((await c.call('GET', '/models?limit=100')).body as { result: { models: ModelRecord[] } }).result
      .models;
    const local = models.filter((m) => m.providers.every((p) => p.id.startsWith('local-')));
    expect(local.map((m) => m.id).sort()).toEqual(['clipdesk/drift', 'clipdesk/motion', 'clipdesk/still']);
    const cases = local.flatMap((m) => {
      const video = m.media === 'video';
      const base = video
        ? { model: m.id, size: '360p', duration: m.parameters.duration?.min ?? 2 }
        : { model: m.id, size: '256x256' };
      const frames = video && m.parameters.image_url?.supported === true ? [false, true] : [false];
      return frames.flatMap((frame) =>
        ROUTING_MODES.map((routing) => ({
          ...base,
          prompt: `preview ${m.id} ${routing}${frame ? ' from a frame' : ''}`,
          routing,
          ...(frame ? { image_url: image } : {}),
        })),
      );
    });
    expect(cases).toHaveLength(15);
    const seen = new Set<string>();
    for (const body of cases) {
      const p = await preview(body);
      const row = p.rows.find((r) => r.routing === body.routing)!;
      expect(row.error, JSON.stringify(body)).toBeNull();
      const before = await spent();
      const endpoint = p.media === 'image' ? '/images/generations' : '/videos/generations';
      const res = await c.call('POST', endpoint, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const what = `${body.model} ${body.routing}${'image_url' in body ? ' i2v' : ''}`;
      expect(row.provider?.id, what).toBe(res.body.stats.providerId);
      expect(row.price, what).toBe(res.body.price);
      expect(row.dropped, what).toEqual(res.body.stats.ignoredParameters ?? []);
      expect(await spent(), what).toBeCloseTo(before + (row.price ?? NaN), 6);
      seen.add(row.provider?.slug ?? '');
    }
    // Every provider is picked somewhere: a test in which routing always agreed would prove little.
    expect([...seen].sort()).toEqual(['prism', 'studio', 'swift']);
  });

  it('image-to-video on optimal: Local Prism at $0.046 for 2 s (the renderer once promised Studio at $0.040)', async () => {
    const p = await preview({
      model: 'clipdesk/motion',
      prompt: 'the issue’s case',
      size: '360p',
      duration: 2,
      image_url: image,
    });
    expect(p.routing).toBe('optimal');
    expect(p.rows.map((r) => [r.routing, r.provider?.slug, r.price, r.dropped])).toEqual([
      ['optimal', 'prism', 0.046, []],
      ['cheapest', 'swift', 0.02, ['image_url']],
      ['compatible', 'studio', 0.04, []],
    ]);
    expect(p.rows[0]!.reason).toBe(
      'Local Prism (procedural): supports HD too, for 15 % more than Local Studio (procedural) (optimal allows up to 20 %)',
    );
    expect(p.rows[1]!.reason).toBe('drops image_url: the cheapest provider takes no start frame');
    const res = await c.call('POST', '/videos/generations', {
      model: 'clipdesk/motion',
      prompt: 'the issue’s case',
      size: '360p',
      duration: 2,
      image_url: image,
    });
    expect([res.body.stats.providerSlug, res.body.price]).toEqual(['prism', 0.046]);
  });

  it('images: the price is the unit price × n', async () => {
    const p = await preview({ model: 'clipdesk/still', prompt: 'four', size: '256x256', n: 4, routing: 'cheapest' });
    expect([p.media, p.count]).toEqual(['image', 4]);
    const cheapest = p.rows.find((r) => r.routing === 'cheapest')!;
    expect([cheapest.provider?.slug, cheapest.unitPrice, cheapest.price]).toEqual(['swift', 0.002, 0.008]);
  });
});

describe('what the preview refuses, and what it does not do', () => {
  const bad: Array<[string, '/videos/generations' | '/images/generations', unknown]> = [
    ['no body', '/videos/generations', {}],
    ['no prompt', '/videos/generations', { model: 'clipdesk/motion' }],
    ['unknown model', '/videos/generations', { model: 'nope/none', prompt: 'x' }],
    ['duration out of range', '/videos/generations', { model: 'clipdesk/motion', prompt: 'x', duration: 99 }],
    ['size not offered', '/videos/generations', { model: 'clipdesk/motion', prompt: 'x', size: '999p' }],
    ['style the model lacks', '/videos/generations', { model: 'clipdesk/motion', prompt: 'x', style: 'noir' }],
    ['too many images', '/images/generations', { model: 'clipdesk/still', prompt: 'x', n: 9 }],
    ['quality not offered', '/images/generations', { model: 'clipdesk/still', prompt: 'x', quality: 'hd' }],
    ['not JSON', '/videos/generations', '{"model":'],
  ];
  it.each(bad)('%s: the same error as the generation route', async (_name, endpoint, body) => {
    const submit = await c.call('POST', endpoint, body);
    const res = await c.call('POST', '/routing/preview', body);
    expect(submit.status).toBeGreaterThanOrEqual(400);
    expect([res.status, res.body.code, res.body.message]).toEqual([
      submit.status,
      submit.body.code,
      submit.body.message,
    ]);
  });

  it('a mode that cannot render the body carries the error its submit gets; the others still answer', async () => {
    const body = { model: 'clipdesk/still', prompt: 'x', size: '256x256', mood: 'calm', routing: 'compatible' };
    const p = await preview(body);
    const [optimal, cheapest, compatible] = p.rows;
    expect(optimal!.dropped).toEqual(['mood']);
    expect(cheapest!.reason).toBe('drops mood: mood: not a parameter of this model');
    const submit = await c.call('POST', '/images/generations', body);
    expect(submit.status).toBe(422);
    expect(compatible).toMatchObject({
      provider: null,
      price: null,
      error: { type: submit.body.code, message: submit.body.message },
    });
  });

  it('a named provider is pinned: every row names it, or carries the 422 its submit gets', async () => {
    const p = await preview({ model: 'clipdesk/motion', prompt: 'x', size: '360p', duration: 2, provider: 'studio' });
    expect(p.pinned?.id).toBe('local-studio');
    expect(p.rows.map((r) => [r.provider?.slug, r.price])).toEqual([
      ['studio', 0.04],
      ['studio', 0.04],
      ['studio', 0.04],
    ]);
    const body = {
      model: 'clipdesk/motion',
      prompt: 'x',
      size: '360p',
      duration: 2,
      provider: 'swift',
      image_url: image,
    };
    const refused = await preview(body);
    const submit = await c.call('POST', '/videos/generations', body);
    expect(submit.status).toBe(422);
    expect(refused.pinned?.slug).toBe('swift');
    for (const row of refused.rows) expect(row.error).toEqual({ type: submit.body.code, message: submit.body.message });
  });

  it('never fetches image_url, charges nothing, stores nothing; only the rate limit counts it', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/frame.png`;
      const before = (await c.call('GET', '/usage')).body.result;
      const media = (await c.call('GET', '/media?user=me')).body.result.total as number;
      const res = await c.call('POST', '/routing/preview', { model: 'clipdesk/motion', prompt: 'x', image_url: url });
      expect(res.status).toBe(200);
      const remaining = Number(res.headers.get('x-ratelimit-remaining'));
      const after = (await c.call('GET', '/usage')).body.result;
      expect(hits).toBe(0);
      expect(after.usage.cost.total).toBe(before.usage.cost.total);
      expect((await c.call('GET', '/media?user=me')).body.result.total).toBe(media);
      // It was counted like any request: after the media list and this list (the usage reads are not
      // counted, docs/api.md), two fewer remain.
      expect(Number((await c.call('GET', '/models')).headers.get('x-ratelimit-remaining'))).toBe(remaining - 2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('needs the generate permission, as generating does', async () => {
    const reader = await t.client('reader', 'pro', ['read']);
    const res = await reader.call('POST', '/routing/preview', { model: 'clipdesk/motion', prompt: 'x' });
    expect([res.status, res.body.code]).toEqual([403, 'permission_error']);
  });
});
