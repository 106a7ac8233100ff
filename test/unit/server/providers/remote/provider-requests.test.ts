import { mkdtemp, rm, stat } from 'node:fs/promises';
import { providerTask } from './adapter-kit.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../../../../../shared/node/ffmpeg.ts';
import { aspectRatio, taskAspectRatio } from '../../../../../server/generation/remote-job.ts';
import type { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { falAdapter, falInput } from '../../../../../server/providers/remote/fal.ts';
import { googleAdapter } from '../../../../../server/providers/remote/google.ts';
import { acceptedAspectRatios, checkedInput } from '../../../../../server/providers/remote/input-schemas.ts';
import { replicateAdapter } from '../../../../../server/providers/remote/replicate.ts';
import { forgetVersions } from '../../../../../server/providers/remote/replicate-versions.ts';
import { runwayAdapter } from '../../../../../server/providers/remote/runway.ts';
import builtin from '../../../../../server/providers/catalog-file/models.json' with { type: 'json' };
import { startFalFake } from '../../../../fakes/providers/fal.ts';
import { startGoogleFake } from '../../../../fakes/providers/google.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import { startReplicateFake } from '../../../../fakes/providers/replicate.ts';
import { startRunwayFake } from '../../../../fakes/providers/runway.ts';
import type { RunningFake } from '../../../../fakes/providers/types.ts';

/** Requests the real services would refuse (docs/providers.md, "Request schemas"): each as sent now. */

const task = (overrides: Partial<ProviderTask>): ProviderTask =>
  providerTask({ path: 'x', modelId: 'x/y:1', ...overrides });

const fakes: RunningFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  forgetVersions();
});

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'clipdesk-requests-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('MiniMax Hailuo 02 resolutions', () => {
  it('fal image-to-video gets 768P for the catalog 720p (its schema takes 512P or 768P only)', async () => {
    const fake = await startFalFake({});
    fakes.push(fake);
    const media = await fakeMedia();
    const startImage = { path: media.image.path, mime: 'image/png', bytes: (await stat(media.image.path)).size };
    const path = 'fal-ai/minimax/hailuo-02/standard/image-to-video';
    const job = await falAdapter.submit(
      { apiKey: fake.key, baseUrl: fake.baseUrl },
      task({ path, durationSeconds: 6, startImage }),
    );
    expect(fake.inputs.get(job.id)).toMatchObject({ resolution: '768P' });
  });

  it('Replicate minimax/hailuo-02 gets 768p for 720p (512p, 768p or 1080p)', async () => {
    const fake = await startReplicateFake({});
    fakes.push(fake);
    const path = 'minimax/hailuo-02';
    const job = await replicateAdapter.submit(
      { apiKey: fake.key, baseUrl: fake.baseUrl },
      task({ path, durationSeconds: 6 }),
    );
    expect(fake.inputs.get(job.id)).toMatchObject({ resolution: '768p', duration: 6 });
  });
});

describe('Luma Ray 2 on fal: aspect ratios', () => {
  it('fal takes 16:9, 9:16, 4:3, 3:4, 21:9 and 9:21, not 1:1', () => {
    expect(acceptedAspectRatios('fal', 'fal-ai/luma-dream-machine/ray-2')).toEqual([
      '16:9',
      '9:16',
      '4:3',
      '3:4',
      '21:9',
      '9:21',
    ]);
  });

  it('a 1:1 body is refused before it reaches fal, naming the field and the allowed values', async () => {
    const fake = await startFalFake({});
    fakes.push(fake);
    const path = 'fal-ai/luma-dream-machine/ray-2';
    const err = await falAdapter
      .submit({ apiKey: fake.key, baseUrl: fake.baseUrl }, task({ path, aspectRatio: '1:1' }))
      .then(
        () => undefined,
        (e: unknown) => e as ProviderError,
      );
    expect(err?.errorClass).toBe('invalid_input');
    expect(err?.message).toMatch(/aspect_ratio '1:1' is not accepted \(allowed: 16:9, 9:16, 4:3/);
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path.startsWith(`/${path}`))).toHaveLength(0);
  });

  it('the chosen ratio is sent as chosen (3:4 stays 3:4)', () => {
    const path = 'fal-ai/luma-dream-machine/ray-2';
    expect(falInput(task({ path, aspectRatio: '3:4' }))).toMatchObject({ aspect_ratio: '3:4' });
  });
});

describe('Kling 2.1 text-to-video on fal', () => {
  it('the catalog routes it to the master endpoint, which fal lists', () => {
    const kling = builtin.models.find((m) => m.id === 'kling/v2.1');
    const fal = kling?.offers.find((o) => o.provider === 'fal');
    expect((fal?.path as Record<string, string>)['text_to_video']).toBe('fal-ai/kling-video/v2.1/master/text-to-video');
  });

  it('an endpoint fal does not list answers 404, which falls back (failed), not invalid_input', async () => {
    const fake = await startFalFake({});
    fakes.push(fake);
    const settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
    // A synced-style offer (its inputs named) whose endpoint fal does not have.
    const path = 'fal-ai/kling-video/v2.1/unlisted/text-to-video';
    const err = await falAdapter.submit(settings, task({ path, inputs: { prompt: { name: 'prompt' } } })).then(
      () => undefined,
      (e: unknown) => e as ProviderError,
    );
    expect(err?.errorClass).toBe('failed');
    expect(err?.status).toBe(404);
    expect(err?.message).toContain(`fal has no endpoint ${path}`);
  });
});

describe('Veo personGeneration depends on the task', () => {
  it('Veo 3 text-to-video takes allow_all only; allow_adult is refused before anything is sent', async () => {
    const fake = await startGoogleFake({});
    fakes.push(fake);
    const settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
    const path = 'veo-3.0-generate-001';
    const base = { path, durationSeconds: 8 };
    const err = await googleAdapter
      .submit(settings, task({ ...base, parameters: { person_generation: 'allow_adult' } }))
      .then(
        () => undefined,
        (e: unknown) => e as ProviderError,
      );
    expect(err?.errorClass).toBe('invalid_input');
    expect(err?.message).toContain('person_generation must be allow_all from text');
    expect(fake.submissions()).toBe(0);
    await googleAdapter.submit(settings, task({ ...base, parameters: { person_generation: 'allow_all' } }));
    expect(fake.submissions()).toBe(1);
  });

  it('Veo 3 image-to-video takes allow_adult only', async () => {
    const fake = await startGoogleFake({});
    fakes.push(fake);
    const media = await fakeMedia();
    const settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
    const startImage = { path: media.image.path, mime: 'image/png', bytes: (await stat(media.image.path)).size };
    const base = { path: 'veo-3.0-generate-001', durationSeconds: 8, startImage };
    const err = await googleAdapter
      .submit(settings, task({ ...base, parameters: { person_generation: 'allow_all' } }))
      .then(
        () => undefined,
        (e: unknown) => e as ProviderError,
      );
    expect(err?.message).toContain('person_generation must be allow_adult from a start image');
    await googleAdapter.submit(settings, task({ ...base, parameters: { person_generation: 'allow_adult' } }));
    expect(fake.submissions()).toBe(1);
  });
});

describe("Replicate luma/ray-2-720p: the start frame's field is the version's", () => {
  async function submitWithFrame(properties?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const fake = await startReplicateFake({});
    fakes.push(fake);
    if (properties) fake.versionInputs.set('luma/ray-2-720p', properties);
    const media = await fakeMedia();
    const startImage = { path: media.image.path, mime: 'image/png', bytes: (await stat(media.image.path)).size };
    const job = await replicateAdapter.submit(
      { apiKey: fake.key, baseUrl: fake.baseUrl },
      task({ path: 'luma/ray-2-720p', startImage }),
    );
    return fake.inputs.get(job.id) as Record<string, unknown>;
  }

  it('a version that names start_image gets start_image', async () => {
    const input = await submitWithFrame();
    expect(typeof input['start_image']).toBe('string');
    expect(input).not.toHaveProperty('start_image_url');
  });

  it('an older version that names only start_image_url gets start_image_url', async () => {
    const input = await submitWithFrame({ prompt: {}, start_image_url: {}, duration: {}, aspect_ratio: {} });
    expect(typeof input['start_image_url']).toBe('string');
    expect(input).not.toHaveProperty('start_image');
  });
});

describe("the creator's aspect ratio", () => {
  it('is what the provider is asked for, not the size shape', () => {
    expect(taskAspectRatio(1280, 720, { aspect_ratio: '9:16' })).toBe('9:16');
    expect(taskAspectRatio(1280, 720, {})).toBe('16:9');
  });

  it('Veo 3 Fast on fal asked 9:16 sends 9:16', () => {
    const t = task({
      path: 'fal-ai/veo3/fast',
      durationSeconds: 8,
      aspectRatio: taskAspectRatio(1280, 720, { aspect_ratio: '9:16' }),
    });
    expect(checkedInput('fal', 'fal-ai/veo3/fast', falInput(t))).toMatchObject({ aspect_ratio: '9:16' });
  });

  it('480p (854x480) is 16:9, not 427:240', () => {
    expect(aspectRatio(854, 480)).toBe('16:9');
    expect(aspectRatio(1344, 768)).toBe('7:4');
    const wan = 'fal-ai/wan/v2.2-a14b/text-to-video';
    const t = task({ path: wan, size: '480p', width: 854, height: 480, aspectRatio: aspectRatio(854, 480) });
    expect(checkedInput('fal', wan, falInput(t))).toMatchObject({ aspect_ratio: '16:9', resolution: '480p' });
  });
});

describe('Runway start frames are fitted, not refused', () => {
  it('a PNG over the 5 MB data URI limit goes as a smaller JPEG', async () => {
    const big = join(scratch, 'big-frame.png');
    // Noise does not compress: a 1800x1800 PNG of it is about 9.7 MB.
    const noise = "nullsrc=s=1800x1800,geq=r='random(1)*255':g='random(2)*255':b='random(3)*255'";
    await runFfmpeg(['-f', 'lavfi', '-i', noise, '-frames:v', '1', '-y', big], { timeoutMs: 60_000 });
    const bytes = (await stat(big)).size;
    expect(bytes).toBeGreaterThan(5_000_000);
    const fake = await startRunwayFake({});
    fakes.push(fake);
    const job = await runwayAdapter.submit(
      { apiKey: fake.key, baseUrl: fake.baseUrl },
      task({ path: 'gen4_turbo', startImage: { path: big, mime: 'image/png', bytes } }),
    );
    expect(job.id).toBeTruthy();
    const sent = fake.requests.find((r) => r.method === 'POST' && r.path.startsWith('/v1/image_to_video'));
    const image = (sent?.body as { promptImage?: string }).promptImage ?? '';
    expect(image.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(image.length).toBeLessThanOrEqual(5_000_000);
  });
});
