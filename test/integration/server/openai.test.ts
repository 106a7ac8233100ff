import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { probe } from '../../../shared/node/ffmpeg.ts';
import { startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

let t: TestService;
let c: TestClient;
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('openai-user', 'pro');
});
afterAll(async () => {
  await t.stop();
});

describe('the official openai client, with only baseURL and apiKey changed', () => {
  it('images.generate returns created and a URL of a real PNG of the requested size', async () => {
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key });
    const result = await openai.images.generate({
      model: 'clipdesk/still',
      prompt: 'a paper crane on a desk',
      size: '256x256',
      n: 2,
    });
    expect(typeof result.created).toBe('number');
    expect(result.data).toHaveLength(2);
    for (const [i, image] of (result.data ?? []).entries()) {
      const res = await fetch(image.url!);
      expect(res.headers.get('content-type')).toBe('image/png');
      const path = join(t.dataDir, `openai-${i}.png`);
      await writeFile(path, Buffer.from(await res.arrayBuffer()));
      expect(await probe(path)).toMatchObject({ width: 256, height: 256, videoCodec: 'png' });
    }
  });

  it('errors come back as the client’s typed errors', async () => {
    const bad = new OpenAI({
      baseURL: t.service.url,
      apiKey: 'cdsk_0123456789abcdef_' + 'B'.repeat(43),
      maxRetries: 0,
    });
    await expect(bad.images.generate({ model: 'clipdesk/still', prompt: 'x' })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key, maxRetries: 0 });
    await expect(
      openai.images.generate({ model: 'clipdesk/still', prompt: 'x', size: '5000x5000' }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(openai.images.generate({ model: 'nobody/none', prompt: 'x' })).rejects.toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it('the image endpoint checks its own prompt limit (1,000 characters)', async () => {
    const ok = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'p'.repeat(1000),
      size: '64x64',
    });
    expect(ok.status).toBe(200);
    const over = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'p'.repeat(1001),
      size: '64x64',
    });
    expect(over.status).toBe(400);
  });
});
