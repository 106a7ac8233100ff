import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchListing, plainText } from '../../../../server/catalog/sync/fetch-json.ts';
import { absurdPrice } from '../../../../server/catalog/sync/price-sanity.ts';
import { syncCatalog } from '../../../../server/catalog/sync/sync.ts';
import { builtinCatalog } from '../../../../server/providers/catalog-file/load.ts';
import { startFalPlatformFake } from '../../../fakes/providers/fal-platform.ts';
import type { FalPlatformFake } from '../../../fakes/providers/fal-platform.ts';
import { FAL_LISTING } from '../../../fakes/providers/listings.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('a hostile upstream', () => {
  let base = '';
  const drips = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('["');
    const timer = setInterval(() => {
      gc();
      res.write('x'.repeat(16 * 1024));
    }, 20);
    drips.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      drips.delete(timer);
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    for (const t of drips) clearInterval(t);
    server.closeAllConnections();
    server.close();
  });
  const request = { name: 'fal', apiKey: 'k-secret-1234', authorization: 'Key k-secret-1234' };

  it('a body that drips is cut at the deadline, whatever the garbage collector does', async () => {
    const limits = { maxBytes: 100_000_000, timeoutMs: 300 };
    const outer = new AbortController();
    await expect(fetchListing(`${base}/drip`, request, limits, outer.signal)).rejects.toThrow(
      /did not finish its listing within/,
    );
  }, 10_000);
});

describe('listing text', () => {
  it('drops every tag, closed or not, and keeps text that only looks like a comparison', () => {
    expect(plainText('A fast model <img src=x onerror=alert(2)//', 100)).toBe('A fast model');
    expect(plainText('<script>alert(1)</script>ok', 100)).toBe('alert(1) ok');
    expect(plainText('one <b>two</b> <!-- three', 100)).toBe('one two');
    expect(plainText('<svg/onload=alert(1)', 100)).toBe('');
    expect(plainText('up to 10 s < 20 s', 100)).toBe('up to 10 s < 20 s');
  });
});

describe('absurd prices', () => {
  let fake: FalPlatformFake;
  let dataDir: string;
  const saved = new Map<string, [number, string] | undefined>();
  /** A built-in model's fal offer (both tasks), a new model, a built-in image model per megapixel, one per video. */
  const ABSURD: Record<string, [number, string]> = {
    'fal-ai/kling-video/v2.5-turbo/pro/text-to-video': [1e308, 'seconds'],
    'fal-ai/kling-video/v2.5-turbo/pro/image-to-video': [1e308, 'seconds'],
    'fal-ai/pixverse/v4.5/text-to-video': [1e308, 'seconds'],
    'fal-ai/flux/schnell': [1e308, 'megapixels'],
    'fal-ai/wan-pro/text-to-video': [5e6, 'videos'],
  };
  const sync = () =>
    syncCatalog({
      dataDir,
      providers: ['fal'],
      credentials: () => ({ apiKey: fake.key }),
      env: { CLIPDESK_FAL_PLATFORM_URL: fake.baseUrl },
    });
  beforeAll(async () => {
    fake = await startFalPlatformFake();
    dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-absurd-'));
  });
  afterAll(async () => {
    for (const entry of FAL_LISTING) if (saved.has(entry.id)) entry.price = saved.get(entry.id);
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('skips and counts a price outside the sane range, keeps the built-in figure, and writes the rest', async () => {
    const sane = await sync();
    const before = sane.providers[0]!;
    const saneDocument = JSON.parse(await readFile(join(dataDir, 'catalog.json'), 'utf8')) as Document;
    expect(offerOf(saneDocument, 'fal-ai/pixverse-v4.5')).toBeDefined();

    for (const entry of FAL_LISTING)
      if (ABSURD[entry.id]) {
        saved.set(entry.id, entry.price);
        entry.price = ABSURD[entry.id];
      }
    expect(saved.size).toBe(Object.keys(ABSURD).length);
    const report = await sync();
    expect(report).toMatchObject({ written: true, keptLast: false });
    const line = report.providers[0]!;
    expect(line).toMatchObject({ provider: 'fal', ok: true });
    // Four models: Kling's two endpoints are one offer.
    expect(line.skipped).toBe((before.skipped ?? 0) + 4);
    const document = JSON.parse(await readFile(join(dataDir, 'catalog.json'), 'utf8')) as Document;
    for (const model of document.models)
      for (const offer of model.offers ?? []) expect(offer.price, model.id).toBeLessThanOrEqual(10);
    // The new model is left out; the built-in ones keep their own figure (no synced price patch).
    expect(offerOf(document, 'fal-ai/pixverse-v4.5')).toBeUndefined();
    expect(offerOf(document, 'kling/v2.5-turbo-pro')?.price).not.toBe(1e308);
    expect(offerOf(document, 'bfl/flux-schnell')?.price ?? 0).toBeLessThan(1);
    expect(document.models.length).toBeGreaterThan(40);
  });

  it('every built-in offer passes the same check', () => {
    const file = builtinCatalog();
    for (const model of file.models)
      for (const offer of model.offers)
        expect(absurdPrice(offer, model.media), `${model.id} ${offer.provider}`).toBe(undefined);
    expect(absurdPrice({ price: 0.4, prices: [{ unit: 'video', usd: 1e308 }] }, 'video')).toBe(
      '1e+308 USD per video is outside 0–100',
    );
    expect(absurdPrice({ price: Number.NaN }, 'image')).toMatch(/outside/);
  });
});

interface Document {
  models: Array<{ id: string; offers?: Array<{ provider: string; price?: number }> }>;
}

function offerOf(document: Document, id: string): { price?: number } | undefined {
  return document.models.find((m) => m.id === id)?.offers?.find((o) => o.provider === 'fal');
}
