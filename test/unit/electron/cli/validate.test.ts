import { describe, expect, it } from 'vitest';
import type { ModelRecord } from '../../../../shared/api/index.ts';
import { checkAgainstModel } from '../../../../electron/cli/validate.ts';

const offer = (slug: string) => ({ id: `prov_${slug}`, slug, price: 0.01, features: [] });
const motion: ModelRecord = {
  id: 'clipdesk/motion',
  base: 'clipdesk',
  slug: 'motion',
  name: 'Motion',
  version: '1.1',
  versions: ['1.0', '1.1'],
  media: 'video',
  description: '',
  parameters: {
    duration: { min: 2, max: 8, default: 4 },
    size: { values: ['360p', '720p'], default: '720p' },
    image_url: { supported: true },
  },
  providers: [offer('swift'), offer('prism')],
};
const still: ModelRecord = {
  ...motion,
  id: 'clipdesk/still',
  media: 'image',
  parameters: {
    size: { values: ['1024x1024'], maxWidth: 4096, maxHeight: 4096, minWidth: 16, minHeight: 16 },
    style: { values: ['noir', 'neon'] },
  },
};
const video = { kind: 'video' as const, image: false };
const message = (fn: () => void): string => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

describe("checkAgainstModel: the model's own rules, in its own words", () => {
  it('names the duration bounds of the model, not the schema limit', () => {
    expect(message(() => checkAgainstModel(motion, { ...video, duration: 20 }))).toBe(
      'duration must be 2–8 s for clipdesk/motion',
    );
    expect(message(() => checkAgainstModel(motion, { ...video, duration: 1 }))).toMatch(/2–8 s/);
    expect(message(() => checkAgainstModel(motion, { ...video, duration: 8 }))).toBe('accepted');
  });

  it('checks sizes: listed values for video, WxH bounds for images', () => {
    expect(message(() => checkAgainstModel(motion, { ...video, size: '1080p' }))).toBe(
      'size must be one of 360p, 720p for clipdesk/motion',
    );
    expect(message(() => checkAgainstModel(motion, { ...video, size: '720P' }))).toBe('accepted');
    const image = { kind: 'image' as const, image: false };
    expect(message(() => checkAgainstModel(still, { ...image, size: '300x200' }))).toBe('accepted');
    expect(message(() => checkAgainstModel(still, { ...image, size: '8000x10' }))).toBe(
      'size must be WxH from 16x16 to 4096x4096 for clipdesk/still',
    );
    expect(message(() => checkAgainstModel(still, { ...image, size: 'big' }))).toMatch(/^size must be WxH/);
  });

  it('takes --end-image only for a model whose parameters name end_image_url of type image', () => {
    const keyframed: ModelRecord = {
      ...motion,
      id: 'hailuo/02',
      parameters: { ...motion.parameters, end_image_url: { type: 'image', description: 'the last frame' } },
    };
    const both = { ...video, image: true, endImage: true };
    expect(message(() => checkAgainstModel(keyframed, both))).toBe('accepted');
    expect(message(() => checkAgainstModel(motion, both))).toBe('clipdesk/motion takes no end frame (--end-image)');
  });

  it('checks style, start image, provider and media kind', () => {
    expect(message(() => checkAgainstModel(motion, { ...video, style: 'noir' }))).toBe(
      'clipdesk/motion takes no --style',
    );
    const image = { kind: 'image' as const, image: false };
    expect(message(() => checkAgainstModel(still, { ...image, style: 'sepia' }))).toBe(
      'style must be one of noir, neon for clipdesk/still',
    );
    expect(message(() => checkAgainstModel(still, { ...image, image: true }))).toBe(
      'clipdesk/still takes no start image (--image)',
    );
    expect(message(() => checkAgainstModel(motion, { ...video, provider: 'nope' }))).toBe(
      'provider must be one of swift, prism for clipdesk/motion',
    );
    expect(message(() => checkAgainstModel(motion, { ...video, provider: 'PRISM' }))).toBe('accepted');
    expect(message(() => checkAgainstModel(still, video))).toBe(
      'clipdesk/still makes images; use clipdesk generate image --model clipdesk/still',
    );
  });
});
