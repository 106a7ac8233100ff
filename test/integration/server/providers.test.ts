import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProviders, findModel, MODELS, RenderError } from '../../../server/providers/index.ts';
import type { LocalProvider, RenderJob } from '../../../server/providers/index.ts';
import { liveProcessCount, probe, runFfmpeg } from '../../../shared/node/ffmpeg.ts';

// Small renders only: 360p (640x360) for 2-3 s, images of a few hundred pixels.
let dir: string;
let startImage: string;
const providers = createLocalProviders();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-providers-'));
  startImage = join(dir, 'start.png');
  await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=400x300', '-frames:v', '1', '-y', startImage]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function job(model: string, over: Partial<RenderJob> = {}): RenderJob {
  const resolved = findModel(model)!;
  const image = resolved.model.media === 'image';
  return {
    kind: resolved.model.media,
    model: resolved.canonicalId,
    prompt: 'a lighthouse at dusk',
    seed: 7,
    width: image ? 321 : 640,
    height: image ? 201 : 360,
    durationSeconds: image ? 0 : (resolved.model.parameters.duration?.min ?? 2),
    workDir: dir,
    signal: new AbortController().signal,
    ...over,
  };
}

const provider = (slug: string): LocalProvider => providers.find((p) => p.slug === slug)!;

describe('every provider renders every model it offers', () => {
  for (const p of providers) {
    for (const offer of p.offers) {
      it(`${p.slug} × ${offer.model}`, async () => {
        const j = job(offer.model, offer.features.includes('style') ? { style: 'neon' } : {});
        const out = await p.render(j);
        const info = await probe(out.path);
        expect(info.width).toBe(j.width);
        expect(info.height).toBe(j.height);
        if (j.kind === 'video') {
          expect(out.mime).toBe('video/mp4');
          expect(info.videoCodec).toBe('h264');
          expect(info.pixelFormat).toBe('yuv420p');
          expect(Math.abs(info.durationSeconds - j.durationSeconds)).toBeLessThan(0.05);
        } else {
          expect(out.mime).toBe('image/png');
          expect(info.videoCodec).toBe('png');
        }
        await rm(out.path);
      });
    }
  }
});

async function frameHashes(path: string): Promise<string> {
  const out = `${path}.framemd5`;
  await runFfmpeg(['-i', path, '-map', '0:v', '-f', 'framemd5', '-y', out]);
  const text = await readFile(out, 'utf8');
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .join('\n');
}

describe('determinism', () => {
  it('the same prompt and seed give the same frames; another seed does not', async () => {
    const p = provider('prism');
    const a = await p.render(job('clipdesk/motion', { seed: 11 }));
    const b = await p.render(job('clipdesk/motion', { seed: 11 }));
    const c = await p.render(job('clipdesk/motion', { seed: 12 }));
    const [ha, hb, hc] = await Promise.all([frameHashes(a.path), frameHashes(b.path), frameHashes(c.path)]);
    expect(a.path).not.toBe(b.path);
    expect(ha.split('\n')).toHaveLength(60);
    expect(hb).toBe(ha);
    expect(hc).not.toBe(ha);
  });

  it('images are deterministic too', async () => {
    const p = provider('studio');
    const a = await p.render(job('clipdesk/still', { style: 'pastel' }));
    const b = await p.render(job('clipdesk/still', { style: 'pastel' }));
    expect(await frameHashes(b.path)).toBe(await frameHashes(a.path));
  });
});

describe('image-to-video', () => {
  it('animates the start image at the requested size and duration, deterministically', async () => {
    const p = provider('studio');
    const a = await p.render(job('clipdesk/drift', { startImagePath: startImage, style: 'noir', durationSeconds: 3 }));
    const info = await probe(a.path);
    expect(info).toMatchObject({ width: 640, height: 360, videoCodec: 'h264' });
    expect(info.durationSeconds).toBeCloseTo(3, 1);
    const hashes = (await frameHashes(a.path)).split('\n').map((l) => l.split(',').at(-1));
    expect(new Set(hashes).size).toBeGreaterThan(hashes.length / 2); // it moves
    const b = await p.render(job('clipdesk/drift', { startImagePath: startImage, style: 'noir', durationSeconds: 3 }));
    expect(await frameHashes(b.path)).toBe(await frameHashes(a.path));
  });

  it('a corrupt start image is a clear, non-retryable input error', async () => {
    const good = await readFile(startImage);
    const corrupt = join(dir, 'corrupt.png');
    await writeFile(corrupt, good.subarray(0, 200));
    const junk = join(dir, 'junk.png');
    await writeFile(junk, 'this is not an image');
    for (const path of [corrupt, junk]) {
      const err = await provider('prism')
        .render(job('clipdesk/motion', { startImagePath: path }))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RenderError);
      expect(err).toMatchObject({ code: 'invalid_input', retryable: false });
      expect((err as Error).message).toMatch(/start image/);
    }
    expect((await readdir(dir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});

describe('cancellation and failures', () => {
  it('abort mid-render kills ffmpeg and leaves no partial file', async () => {
    const ac = new AbortController();
    const before = new Set(await readdir(dir));
    const render = provider('prism').render(
      job('clipdesk/drift', { width: 1920, height: 1080, durationSeconds: 10, signal: ac.signal }),
    );
    for (let i = 0; i < 500 && liveProcessCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(liveProcessCount()).toBe(1);
    ac.abort();
    const err = await render.catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'aborted' });
    expect(liveProcessCount()).toBe(0);
    const after = (await readdir(dir)).filter((f) => !before.has(f));
    expect(after).toEqual([]);
  });

  it('refuses jobs its offers do not cover', async () => {
    await expect(provider('swift').render(job('clipdesk/motion', { width: 1920, height: 1080 }))).rejects.toMatchObject(
      {
        code: 'unsupported',
      },
    );
    await expect(
      provider('swift').render(job('clipdesk/motion', { startImagePath: startImage })),
    ).rejects.toMatchObject({
      code: 'unsupported',
    });
    await expect(provider('swift').render(job('clipdesk/still', { width: 4000, height: 100 }))).rejects.toMatchObject({
      code: 'unsupported',
    });
  });

  it('a provider set to fail fails every request with a retryable error', async () => {
    const [swift] = createLocalProviders({ failProviders: ['swift'] });
    expect(swift!.slug).toBe('swift');
    await expect(swift!.render(job('clipdesk/motion'))).rejects.toMatchObject({
      code: 'provider_failure',
      retryable: true,
    });
  });

  it('covers every model in the catalog', () => {
    for (const m of MODELS) expect(providers.some((p) => p.offers.some((o) => o.model === m.id))).toBe(true);
  });
});
