import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../server/index.ts';
import { SMALL_VIDEO, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/** Everything the service logs, so the test can tell whether a provider was tried. */
const lines: string[] = [];
const logger: Logger = {
  info: (m) => lines.push(`info ${m}`),
  warn: (m) => lines.push(`warn ${m}`),
  error: (m) => lines.push(`error ${m}`),
};

let t: TestService;
let c: TestClient;
beforeAll(async () => {
  t = await startTestService({ failProviders: ['swift'], logger });
  c = await t.client('named-provider', 'pro');
});
afterAll(async () => {
  await t.stop();
});

describe('a provider named in the request that /providers lists unavailable', () => {
  it('gets 503 provider_unavailable at once, without being tried', async () => {
    expect((await c.call('GET', '/providers')).body.result.providers).toEqual(
      expect.arrayContaining([expect.objectContaining({ slug: 'swift', status: 'unavailable' })]),
    );
    lines.length = 0;
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'swift only',
      provider: 'swift',
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('provider_unavailable');
    expect(res.body.message).toMatch(/swift.*unavailable/);
    // A tried provider logs its failure; this one was never asked to render.
    expect(lines.filter((l) => l.includes('swift'))).toEqual([]);
    expect(t.service.stats.maxConcurrent('named-provider', 'video')).toBe(0);
    expect((await c.call('GET', '/usage')).body.result.usage.cost.total).toBe(0);
    // By id too.
    const byId = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'x',
      provider: 'local-swift',
    });
    expect(byId.status).toBe(503);
  });

  it('an available provider named the same way still renders', async () => {
    const res = await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'studio', provider: 'studio' });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('studio');
  });
});
