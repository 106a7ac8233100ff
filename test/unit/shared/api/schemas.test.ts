import { describe, expect, it } from 'vitest';
import { JobRequest } from '../../../../shared/ipc/schemas/jobs.ts';
import {
  ERROR_CODES,
  ERROR_STATUS,
  ErrorBody,
  GenerationResponse,
  ImageGenerationRequest,
  MediaItem,
  MediaListQuery,
  MediaListResponse,
  ModelListResponse,
  ProviderListResponse,
  RetainRequest,
  TIERS,
  UploadRequest,
  UploadTicketResponse,
  UsageResponse,
  VideoGenerationRequest,
  uploadLimitFor,
} from '../../../../shared/api/index.ts';

const item = {
  id: 'med_1',
  url: 'http://127.0.0.1:8787/v1/files/med_1.mp4',
  mime: 'video/mp4',
  user: 'usr_1',
  media: 'video',
  model: 'clipdesk/motion',
  provider: 'local-fast',
  prompt: 'a red kite over dunes',
  size: '720p',
  duration: 4,
  createdAt: '2026-11-22T03:00:00.000Z',
};

describe('VideoGenerationRequest', () => {
  it('applies defaults and keeps model-specific parameters', () => {
    const parsed = VideoGenerationRequest.parse({ model: 'clipdesk/drift', prompt: 'waves', style: 'noir', fps: 24 });
    expect(parsed.routing).toBe('optimal');
    expect(parsed.public).toBe(true);
    expect(parsed.style).toBe('noir');
    expect((parsed as Record<string, unknown>).fps).toBe(24);
  });

  it('counts the prompt in code points: 500 emoji pass (1,000 UTF-16 units), 501 do not', () => {
    expect(VideoGenerationRequest.safeParse({ model: 'a/b', prompt: '🦊'.repeat(500) }).success).toBe(true);
    expect(VideoGenerationRequest.safeParse({ model: 'a/b', prompt: '🦊'.repeat(501) }).success).toBe(false);
    const job = { kind: 'video', model: 'a/b', prompt: '🦊'.repeat(300) };
    expect(JobRequest.safeParse(job).success).toBe(true);
    const over = JobRequest.safeParse({ ...job, prompt: '🦊'.repeat(501) });
    expect(over.error?.issues[0]).toMatchObject({ path: ['prompt'], message: 'prompt must be at most 500 characters' });
  });

  it('takes a prompt of exactly 500 characters and refuses 501', () => {
    expect(VideoGenerationRequest.safeParse({ model: 'a/b', prompt: 'x'.repeat(500) }).success).toBe(true);
    const over = VideoGenerationRequest.safeParse({ model: 'a/b', prompt: 'x'.repeat(501) });
    expect(over.success).toBe(false);
    expect(over.error?.issues[0]?.message).toMatch(/at most 500 characters/);
  });

  it.each([
    [{ prompt: 'p' }, 'missing model'],
    [{ model: 'a/b' }, 'missing prompt'],
    [{ model: 'a/b', prompt: '' }, 'empty prompt'],
    [{ model: 'a/b', prompt: 'p', duration: '4' }, 'duration as a string'],
    [{ model: 'a/b', prompt: 'p', duration: -1 }, 'negative duration'],
    [{ model: 'a/b', prompt: 'p', duration: 31 }, 'over 30 seconds'],
    [{ model: 'a/b', prompt: 'p', routing: 'fastest' }, 'unknown routing'],
    [{ model: 'a/b', prompt: 'p', public: 'yes' }, 'public as a string'],
    [{ model: 42, prompt: 'p' }, 'model as a number'],
  ])('rejects %j (%s)', (body, _why) => {
    expect(VideoGenerationRequest.safeParse(body).success).toBe(false);
  });
});

describe('ImageGenerationRequest', () => {
  it('accepts 1,000 characters and 4096x4096', () => {
    const ok = ImageGenerationRequest.safeParse({ model: 'a/b', prompt: 'x'.repeat(1000), size: '4096x4096' });
    expect(ok.success).toBe(true);
  });
  it.each(['4097x4096', '0x10', '10x', 'x10', '10 x 10', '1024X1024', '-5x5'])('rejects size %s', (size) => {
    expect(ImageGenerationRequest.safeParse({ model: 'a/b', prompt: 'p', size }).success).toBe(false);
  });
  it('rejects a 1,001-character prompt', () => {
    expect(ImageGenerationRequest.safeParse({ model: 'a/b', prompt: 'x'.repeat(1001) }).success).toBe(false);
  });
});

describe('MediaListQuery', () => {
  it('defaults to limit 25, page 0, newest', () => {
    expect(MediaListQuery.parse({})).toMatchObject({ limit: 25, page: 0, sort: 'newest' });
  });
  it('clamps limit to 100 and parses query-string integers', () => {
    expect(MediaListQuery.parse({ limit: '100000', page: '3' })).toMatchObject({ limit: 100, page: 3 });
  });
  it.each([
    { limit: '0' },
    { limit: '-1' },
    { limit: '1.5' },
    { limit: 'ten' },
    { page: '-1' },
    { page: '99999999999' },
    { sort: 'random' },
    { media: 'audio' },
  ])('rejects %j', (query) => {
    expect(MediaListQuery.safeParse(query).success).toBe(false);
  });
  it('keeps SQL and FTS metacharacters in search as plain text', () => {
    expect(MediaListQuery.parse({ search: `"' OR 1=1; -- NEAR(*)` }).search).toBe(`"' OR 1=1; -- NEAR(*)`);
  });
});

describe('response envelopes', () => {
  it('parses a list and keeps unknown fields', () => {
    const body = {
      success: true,
      result: { total: 1, medias: [{ ...item, modelSlug: 'clipdesk/motion:1.1', providerName: 'Fast', extra: 1 }] },
    };
    const parsed = MediaListResponse.parse(body);
    expect((parsed.result.medias[0] as Record<string, unknown>).extra).toBe(1);
  });
  it('requires modelSlug and providerName on listed items', () => {
    expect(MediaItem.safeParse(item).success).toBe(false);
  });
  it('parses a generation envelope with stats', () => {
    const body = {
      success: true,
      data: [item],
      price: 0.2,
      stats: { setupTime: 0.01, processingTime: 1.2, generationTime: 2.5, retries: 1, providerId: 'prv_fast' },
    };
    expect(GenerationResponse.parse(body).stats.retries).toBe(1);
    expect(GenerationResponse.safeParse({ ...body, stats: { ...body.stats, retries: -1 } }).success).toBe(false);
  });
  it('parses model, provider and usage lists', () => {
    const model = {
      id: 'mdl_motion',
      base: 'clipdesk',
      slug: 'motion',
      name: 'Motion',
      version: '1.1',
      versions: ['1.0', '1.1'],
      media: 'video',
      description: 'procedural',
      parameters: { duration: { min: 2, max: 8, default: 4 }, size: { values: ['720p'], default: '720p' } },
      providers: [{ id: 'prv_fast', slug: 'local-fast', price: 0.05, features: ['text_to_video'] }],
    };
    expect(ModelListResponse.parse({ success: true, result: { total: 1, models: [model] } }).result.total).toBe(1);
    const provider = {
      id: 'prv_fast',
      slug: 'local-fast',
      name: 'Fast',
      status: 'available',
      models: ['clipdesk/motion'],
      features: [],
    };
    expect(
      ProviderListResponse.parse({ success: true, result: { total: 1, providers: [provider] } }).result.providers,
    ).toHaveLength(1);
    const usage = {
      success: true,
      result: {
        tier: 'free',
        limits: { rate: TIERS.free.rate, concurrency: TIERS.free.concurrency, storageBytes: 1e9, retentionDays: 7 },
        usage: {
          requests: { minute: 1, hour: 1, day: 1 },
          running: { image: 0, video: 1 },
          storageBytes: 5,
          cost: { total: 0.2, byKey: [] },
        },
      },
    };
    expect(UsageResponse.parse(usage).result.tier).toBe('free');
  });
});

describe('errors', () => {
  it('maps every code to a status', () => {
    for (const code of ERROR_CODES) expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
    expect(ERROR_STATUS.rate_limit_exceeded).toBe(429);
  });
  it('parses a 429 body with retry_after and rejects a fractional one', () => {
    const body = {
      success: false,
      message: 'Rate limit exceeded: retry in 12 seconds',
      code: 'rate_limit_exceeded',
      retry_after: 12,
    };
    expect(ErrorBody.parse(body).retry_after).toBe(12);
    expect(ErrorBody.safeParse({ ...body, retry_after: 1.5 }).success).toBe(false);
    expect(ErrorBody.safeParse({ success: true, message: 'x', code: 'y' }).success).toBe(false);
  });
});

describe('uploads', () => {
  it('binds limits to the declared type', () => {
    expect(uploadLimitFor('image/png')).toBe(20_000_000);
    expect(uploadLimitFor('video/mp4')).toBe(100_000_000);
    expect(uploadLimitFor('application/x-msdownload')).toBeNull();
  });
  it.each([
    { filename: '../evil.png', mime: 'image/png', size: 10 },
    { filename: 'a\\b.png', mime: 'image/png', size: 10 },
    { filename: '', mime: 'image/png', size: 10 },
    { filename: 'a.png', mime: 'image/png', size: 0 },
    { filename: 'a.png', mime: 'image/png', size: 1.5 },
    { filename: 'a.png', mime: 'image/png', size: '10' },
  ])('rejects %j', (body) => {
    expect(UploadRequest.safeParse(body).success).toBe(false);
  });
  it('parses a ticket', () => {
    const ticket = {
      id: 'upl_1',
      uploadUrl: 'http://h/v1/uploads/upl_1?sig=x',
      method: 'PUT',
      headers: { 'content-type': 'image/png' },
      expiresAt: item.createdAt,
    };
    expect(UploadTicketResponse.parse({ success: true, result: ticket }).result.method).toBe('PUT');
  });
});

describe('RetainRequest', () => {
  it('accepts days or forever and refuses nonsense', () => {
    expect(RetainRequest.safeParse({ days: 30 }).success).toBe(true);
    expect(RetainRequest.safeParse({ forever: true }).success).toBe(true);
    expect(RetainRequest.safeParse({ days: 0 }).success).toBe(false);
    expect(RetainRequest.safeParse({ days: 1e9 }).success).toBe(false);
  });
});
