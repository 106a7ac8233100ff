import { CONTENT_LIMITS, parseImageSize, parseModelId } from '../../shared/api/index.ts';
import { VIDEO_SIZE_PIXELS } from '../../shared/api/offer-sizes.ts';
import type { Feature, MediaKind, ModelParameters } from '../../shared/api/index.ts';
import type { ProviderOffer } from './types.ts';

/**
 * The Local engine's models and the price table of its providers.
 *
 * These are procedural renderers built on ffmpeg, not AI models: they turn the prompt, the seed
 * and an optional start image into real, decodable video or images, so that routing, fallbacks,
 * limits and storage all run for real offline.
 */
export interface ModelDefinition {
  /** `base/slug`, the id without a version. */
  id: string;
  base: string;
  slug: string;
  name: string;
  description: string;
  media: MediaKind;
  /** Oldest first; the last one is the latest, used when a request omits the version. */
  versions: string[];
  parameters: ModelParameters;
}

const VIDEO_SIZES = ['360p', '480p', '720p', '1080p'] as const;
export type VideoSize = (typeof VIDEO_SIZES)[number];

/** Pixel dimensions of the video size labels (shared with the price tables' per-megapixel lines). */
const VIDEO_SIZE_DIMENSIONS: Readonly<Record<VideoSize, { width: number; height: number }>> = VIDEO_SIZE_PIXELS;

const STYLES = ['noir', 'neon', 'pastel', 'vivid'] as const;
export type Style = (typeof STYLES)[number];

/** Largest image side a provider without the `hd` feature renders. */
const IMAGE_STANDARD_MAX = 2048;
const IMAGE_DEFAULT_SIZE = '1024x1024';

export const MODELS: ModelDefinition[] = [
  {
    id: 'clipdesk/motion',
    base: 'clipdesk',
    slug: 'motion',
    name: 'Motion (procedural, ffmpeg)',
    description:
      'Procedural video renderer built on ffmpeg, not an AI model: the prompt and seed pick a pattern ' +
      '(plasma, fractal zoom, cellular automata), its colours and its speed; a start image is animated with pan and zoom. ' +
      'Version 1.1 adds drifting light orbs and a vignette.',
    media: 'video',
    versions: ['1.0', '1.1'],
    parameters: {
      duration: { min: 2, max: 8, default: 4 },
      size: { values: [...VIDEO_SIZES], default: '1080p' },
      image_url: { supported: true },
    },
  },
  {
    id: 'clipdesk/drift',
    base: 'clipdesk',
    slug: 'drift',
    name: 'Drift (procedural, ffmpeg)',
    description:
      'Procedural video renderer built on ffmpeg, not an AI model: slow flowing colour fields and orbs derived from ' +
      'the prompt and seed, or a slow pan across a start image, with a visual style (noir, neon, pastel, vivid).',
    media: 'video',
    versions: ['1.0'],
    parameters: {
      duration: { min: 3, max: 10, default: 6 },
      size: { values: [...VIDEO_SIZES], default: '1080p' },
      image_url: { supported: true },
      style: { values: [...STYLES] },
    },
  },
  {
    id: 'clipdesk/still',
    base: 'clipdesk',
    slug: 'still',
    name: 'Still (procedural, ffmpeg)',
    description:
      'Procedural image renderer built on ffmpeg, not an AI model: one PNG frame of a pattern derived from the prompt ' +
      'and seed, any size up to 4096x4096, with an optional visual style.',
    media: 'image',
    versions: ['1.0'],
    parameters: {
      size: {
        values: ['256x256', '512x512', '1024x1024', '1536x1024', '1024x1536', '2048x2048', '4096x4096'],
        default: IMAGE_DEFAULT_SIZE,
        // Any WxH within these bounds is accepted, not only the listed values.
        maxWidth: CONTENT_LIMITS.imageMaxDimension,
        maxHeight: CONTENT_LIMITS.imageMaxDimension,
        minWidth: 16,
        minHeight: 16,
      },
      style: { values: [...STYLES] },
      n: { min: 1, max: 4, default: 1 },
    },
  },
];

export interface ProviderDefinition {
  id: string;
  slug: string;
  name: string;
  description: string;
  /** Encoder effort: the cheap provider renders faster and rougher. */
  quality: { preset: 'ultrafast' | 'veryfast'; crf: number; fps: number };
  offers: ProviderOffer[];
}

const SMALL_VIDEO: string[] = ['360p', '480p', '720p'];
const ALL_VIDEO: string[] = [...VIDEO_SIZES];
const IMAGE_STANDARD = [`${IMAGE_STANDARD_MAX}x${IMAGE_STANDARD_MAX}`];
const IMAGE_HD = [`${CONTENT_LIMITS.imageMaxDimension}x${CONTENT_LIMITS.imageMaxDimension}`];

/**
 * Price table (USD per second of video, per image). The three providers differ in price and in
 * features so that each routing mode picks a different one for suitable requests.
 *
 * | model            | swift                          | studio                                   | prism                                        |
 * |------------------|--------------------------------|------------------------------------------|----------------------------------------------|
 * | clipdesk/motion  | 0.010 t2v,seed; ≤720p          | 0.020 t2v,i2v,seed; ≤720p                | 0.023 t2v,i2v,seed,hd; ≤1080p                |
 * | clipdesk/drift   | 0.012 t2v,seed; ≤720p          | 0.018 t2v,i2v,style,seed,hd; ≤1080p      | 0.030 t2v,i2v,style,seed,hd; ≤1080p          |
 * | clipdesk/still   | 0.002 t2i,seed; ≤2048²         | 0.004 t2i,style,seed; ≤2048²             | 0.0045 t2i,style,seed,hd; ≤4096²             |
 *
 * Routing example (ROUTING_EXAMPLE below, checked by a unit test):
 * `{model:'clipdesk/motion', prompt, size:'720p', image_url}` uses text_to_video + image_to_video.
 * - cheapest → swift (0.010): meets the model, size and duration; the start image is dropped.
 * - compatible → studio (0.020): the cheapest that honours the start image.
 * - optimal → prism (0.023): studio is the cheapest with every requested feature, but prism has
 *   strictly more (adds hd) for 15 % more, within the 20 % allowance.
 *
 * Without an explicit size the default is 1080p (hd), which only prism renders for motion.
 */
export const PROVIDERS: ProviderDefinition[] = [
  {
    id: 'local-swift',
    slug: 'swift',
    name: 'Local Swift (procedural)',
    description:
      'Fast, low-cost procedural renderer built on ffmpeg (not AI). Text prompts only, up to 720p; ' +
      'ignores start images and styles.',
    quality: { preset: 'ultrafast', crf: 28, fps: 24 },
    offers: [
      { model: 'clipdesk/motion', price: 0.01, features: ['text_to_video', 'seed'], sizes: SMALL_VIDEO },
      { model: 'clipdesk/drift', price: 0.012, features: ['text_to_video', 'seed'], sizes: SMALL_VIDEO },
      { model: 'clipdesk/still', price: 0.002, features: ['text_to_image', 'seed'], sizes: IMAGE_STANDARD },
    ],
  },
  {
    id: 'local-studio',
    slug: 'studio',
    name: 'Local Studio (procedural)',
    description:
      'Balanced procedural renderer built on ffmpeg (not AI): animates start images with pan and zoom and applies styles.',
    quality: { preset: 'veryfast', crf: 23, fps: 24 },
    offers: [
      {
        model: 'clipdesk/motion',
        price: 0.02,
        features: ['text_to_video', 'image_to_video', 'seed'],
        sizes: SMALL_VIDEO,
      },
      {
        model: 'clipdesk/drift',
        price: 0.018,
        features: ['text_to_video', 'image_to_video', 'style', 'seed', 'hd'],
        sizes: ALL_VIDEO,
      },
      { model: 'clipdesk/still', price: 0.004, features: ['text_to_image', 'style', 'seed'], sizes: IMAGE_STANDARD },
    ],
  },
  {
    id: 'local-prism',
    slug: 'prism',
    name: 'Local Prism (procedural)',
    description:
      'Full-featured procedural renderer built on ffmpeg (not AI): every feature, up to 1080p video and 4096x4096 images, 30 fps.',
    quality: { preset: 'veryfast', crf: 21, fps: 30 },
    offers: [
      {
        model: 'clipdesk/motion',
        price: 0.023,
        features: ['text_to_video', 'image_to_video', 'seed', 'hd'],
        sizes: ALL_VIDEO,
      },
      {
        model: 'clipdesk/drift',
        price: 0.03,
        features: ['text_to_video', 'image_to_video', 'style', 'seed', 'hd'],
        sizes: ALL_VIDEO,
      },
      {
        model: 'clipdesk/still',
        price: 0.0045,
        features: ['text_to_image', 'style', 'seed', 'hd'],
        sizes: IMAGE_HD,
      },
    ],
  },
];

/** The documented request for which optimal, cheapest and compatible pick three providers. */
export const ROUTING_EXAMPLE = {
  request: {
    model: 'clipdesk/motion',
    prompt: 'a lighthouse at dusk',
    size: '720p',
    image_url: 'https://example.test/start.png',
  },
  features: ['text_to_video', 'image_to_video'] as Feature[],
  expected: { cheapest: 'swift', compatible: 'studio', optimal: 'prism' },
} as const;

export interface ResolvedModel {
  model: ModelDefinition;
  version: string;
  /** `base/slug:version`, the version resolved (latest when the request omitted it). */
  canonicalId: string;
}

/**
 * Finds a model by `base/slug[:version]` (latest version when omitted) or by its bare slug.
 * Returns undefined for an unknown model or version, or a malformed id.
 */
export function findModel(idOrSlug: string): ResolvedModel | undefined {
  return findModelIn(MODELS, idOrSlug);
}

/** findModel over another list of models (the service's: procedural ones plus the AI catalog). */
export function findModelIn(models: readonly ModelDefinition[], idOrSlug: string): ResolvedModel | undefined {
  const text = idOrSlug.trim().toLowerCase();
  if (!text.includes('/')) {
    const [slug = '', version, extra] = text.split(':');
    if (extra !== undefined) return undefined;
    const model = models.find((m) => m.slug === slug);
    return model ? resolveVersion(model, version ?? null) : undefined;
  }
  const parsed = parseModelId(text);
  if (!parsed.ok) return undefined;
  const { base, model: slug, version } = parsed.id;
  const model = models.find((m) => m.base === base && m.slug === slug);
  return model ? resolveVersion(model, version) : undefined;
}

function resolveVersion(model: ModelDefinition, version: string | null): ResolvedModel | undefined {
  const chosen = version ?? model.versions.at(-1);
  if (chosen === undefined || !model.versions.includes(chosen)) return undefined;
  return { model, version: chosen, canonicalId: `${model.id}:${chosen}` };
}

/** Pixel dimensions of a video size label (`'720p'` → 1280x720), or undefined. */
export function videoSizeDimensions(label: string): { width: number; height: number } | undefined {
  return (VIDEO_SIZE_DIMENSIONS as Record<string, { width: number; height: number }>)[label.trim().toLowerCase()];
}

/** Pixel dimensions of an image size `WxH` within the model's bounds, or undefined. */
export function imageSizeDimensions(
  size: string,
  model?: ModelDefinition,
): { width: number; height: number } | undefined {
  const label = size.trim().toLowerCase();
  const [width, height] = parseImageSize(label);
  const rule = (model?.parameters.size ?? {}) as {
    values?: string[];
    maxWidth?: number;
    maxHeight?: number;
    minWidth?: number;
    minHeight?: number;
  };
  // A rule with values and no bounds is a closed list: the model renders those sizes only.
  const closed = rule.values !== undefined && rule.maxWidth === undefined && rule.minWidth === undefined;
  if (closed && model !== undefined) return rule.values?.includes(label) ? { width, height } : undefined;
  const maxW = rule.maxWidth ?? CONTENT_LIMITS.imageMaxDimension;
  const maxH = rule.maxHeight ?? CONTENT_LIMITS.imageMaxDimension;
  const minW = rule.minWidth ?? 1;
  const minH = rule.minHeight ?? 1;
  if (width < minW || height < minH || width > maxW || height > maxH) return undefined;
  return { width, height };
}

/** Pixel dimensions of a size for a model of either media kind, or undefined when the model does not offer it. */
export function sizeDimensions(model: ModelDefinition, size: string): { width: number; height: number } | undefined {
  if (model.media === 'image') return imageSizeDimensions(size, model);
  const allowed = model.parameters.size?.values ?? [];
  const label = size.trim().toLowerCase();
  return allowed.includes(label) ? videoSizeDimensions(label) : undefined;
}

/** The size a request gets when it names none. */
export function defaultSize(model: ModelDefinition): string {
  if (model.parameters.size?.default !== undefined) return model.parameters.size.default;
  return model.media === 'image' ? IMAGE_DEFAULT_SIZE : videoDefaultSize(model.parameters.size?.values ?? VIDEO_SIZES);
}

/**
 * A video model's default size (docs/providers.md): the spec's default, 1080p, where the model
 * offers it; else the largest size it offers, so a request that names none gets the best the
 * model makes rather than a size it cannot.
 */
export function videoDefaultSize(values: readonly string[]): string {
  if (values.includes('1080p')) return '1080p';
  const lines = (size: string) => Number(/^(\d+)p$/.exec(size)?.[1] ?? 0);
  return values.reduce((best, size) => (lines(size) > lines(best) ? size : best), values[0] ?? '1080p');
}

export interface FeatureRequest {
  media: MediaKind;
  size?: string;
  image_url?: string;
  style?: string;
  seed?: number;
  /** `audio: true`: the request asks for a soundtrack. */
  audio?: boolean;
}

/**
 * The features a request uses: text_to_video (or text_to_image), image_to_video with a start
 * image, style when given, seed when given, hd for 1080p video or images larger than 2048 on a
 * side, audio when it asks for sound.
 * Pass the size after defaulting, so an omitted size counts as the model's default.
 */
export function requestFeatures(req: FeatureRequest): Feature[] {
  const features: Feature[] = [req.media === 'image' ? 'text_to_image' : 'text_to_video'];
  if (req.media === 'video' && req.image_url !== undefined) features.push('image_to_video');
  if (req.style !== undefined) features.push('style');
  if (isHdSize(req.media, req.size)) features.push('hd');
  if (req.seed !== undefined) features.push('seed');
  if (req.media === 'video' && req.audio === true) features.push('audio');
  return features;
}

export function isHdSize(media: MediaKind, size: string | undefined): boolean {
  if (size === undefined) return false;
  if (media === 'video') return size.trim().toLowerCase() === '1080p';
  const [w, h] = parseImageSize(size.trim().toLowerCase());
  return Math.max(w, h) > IMAGE_STANDARD_MAX;
}

/** Whether a provider's offer renders this size (a basic requirement of routing). */
export function offerSupportsSize(offer: ProviderOffer, media: MediaKind, size: string): boolean {
  const label = size.trim().toLowerCase();
  if (media === 'video') return offer.sizes.includes(label);
  const [w, h] = parseImageSize(label);
  if (w === 0 || h === 0) return false;
  return offer.sizes.some((bound) => {
    const [bw, bh] = parseImageSize(bound);
    return w <= bw && h <= bh;
  });
}

/** The provider's own model path for a task, when the offer names one for it. */
export function offerPath(
  offer: ProviderOffer,
  task: 'text_to_video' | 'image_to_video' | 'text_to_image',
): string | undefined {
  if (offer.path === undefined || typeof offer.path === 'string') return offer.path;
  return offer.path[task];
}

/** The offer of a provider for a model (`base/slug`, any version), if it serves it. */
export function findOffer(provider: { offers: ProviderOffer[] }, modelId: string): ProviderOffer | undefined {
  const base = modelId.split(':')[0]?.toLowerCase();
  return provider.offers.find((o) => o.model === base);
}
