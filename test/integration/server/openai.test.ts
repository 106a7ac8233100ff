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

  it('a 400 shows our message, not "400 status code (no body)"', async () => {
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key, maxRetries: 0 });
    const error = await openai.images
      .generate({ model: 'clipdesk/still', prompt: 'x', size: '5000x5000' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.message).toMatch(/^400 size: size must be at most 4096x4096/);
    expect(bad.type).toBe('invalid_request_error');
    expect(bad.code).toBe('invalid_request_error');
  });

  it('response_format b64_json returns each image’s bytes', async () => {
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key });
    const result = await openai.images.generate({
      model: 'clipdesk/still',
      prompt: 'a lantern in the fog',
      size: '96x64',
      response_format: 'b64_json',
    });
    const b64 = result.data?.[0]?.b64_json;
    expect(typeof b64).toBe('string');
    const path = join(t.dataDir, 'openai-b64.png');
    await writeFile(path, Buffer.from(b64!, 'base64'));
    expect(await probe(path)).toMatchObject({ width: 96, height: 64, videoCodec: 'png' });
  });

  it('n up to the model’s maximum (from the catalog); beyond it the message names the bound', async () => {
    // A single record answers under `result` (older servers: `data`).
    const record = (await c.call('GET', '/models/clipdesk%2Fstill')).body as Record<string, unknown>;
    const model = (record['result'] ?? record['data']) as { parameters: { n: { max: number } } };
    const max = model.parameters.n.max;
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key, maxRetries: 0 });
    const result = await openai.images.generate({ model: 'clipdesk/still', prompt: 'dots', size: '32x32', n: max });
    expect(result.data).toHaveLength(max);
    await expect(
      openai.images.generate({ model: 'clipdesk/still', prompt: 'dots', size: '32x32', n: max + 1 }),
    ).rejects.toThrow(`400 n: clipdesk/still makes 1 to ${max} images per request, not ${max + 1}`);
  });

  it('OpenAI’s quality values: the standard ones render, hd and high are refused with a reason', async () => {
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key, maxRetries: 0 });
    for (const quality of ['standard', 'auto', 'low', 'medium'] as const) {
      const result = await openai.images.generate({ model: 'clipdesk/still', prompt: 'q', size: '32x32', quality });
      expect(result.data, quality).toHaveLength(1);
    }
    for (const quality of ['hd', 'high'] as const) {
      const error = await openai.images
        .generate({ model: 'clipdesk/still', prompt: 'q', size: '32x32', quality })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
      expect((error as Error).message).toMatch(/quality: clipdesk\/still renders one quality/);
    }
  });

  it('OpenAI’s style values: vivid is our vivid style, natural the model’s plain look', async () => {
    const openai = new OpenAI({ baseURL: t.service.url, apiKey: c.key, maxRetries: 0 });
    const seed = { seed: 7 } as Record<string, unknown>;
    const make = async (style?: 'vivid' | 'natural') => {
      const result = await openai.images.generate({
        model: 'clipdesk/still',
        prompt: 'a style probe',
        size: '32x32',
        response_format: 'b64_json',
        ...(style ? { style } : {}),
        ...seed,
      });
      return result.data?.[0]?.b64_json;
    };
    const plain = await make();
    expect(await make('natural')).toBe(plain);
    const vivid = await make('vivid');
    expect(vivid).not.toBe(plain);
    const ours = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'a style probe',
      size: '32x32',
      style: 'vivid',
      response_format: 'b64_json',
      seed: 7,
    });
    expect(ours.body.data[0].b64_json).toBe(vivid);
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
