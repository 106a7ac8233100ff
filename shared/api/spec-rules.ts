import { CONTENT_LIMITS } from './constants.ts';
import type { ModelParameters, ModelRecord } from './model-records.ts';

/**
 * What the spec itself says about a request's parameters, for a model whose record has no
 * `parameters` (another service's; docs/api.md "Extensions"): the form and the checks follow it.
 * Durations: "typically 4 to 6" by default, at most 30 seconds; video sizes up to 1080p (its
 * default); image sizes any `WxH` up to 4096x4096; a source image is a field of every video request.
 */
export const SPEC_VIDEO_PARAMETERS: ModelParameters = {
  duration: { min: 1, max: CONTENT_LIMITS.videoMaxSeconds, default: 5 },
  size: { values: ['360p', '480p', '720p', '1080p'], default: '1080p' },
  image_url: { supported: true },
};

export const SPEC_IMAGE_PARAMETERS: ModelParameters = {
  size: {
    values: ['1024x1024'],
    default: '1024x1024',
    minWidth: 1,
    minHeight: 1,
    maxWidth: CONTENT_LIMITS.imageMaxDimension,
    maxHeight: CONTENT_LIMITS.imageMaxDimension,
  },
};

/** The model's own rules, or the spec's when the service sends none. */
export function parametersOf(model: Pick<ModelRecord, 'media' | 'parameters'>): ModelParameters {
  return model.parameters ?? (model.media === 'image' ? SPEC_IMAGE_PARAMETERS : SPEC_VIDEO_PARAMETERS);
}

/** Whether the service told its own rules (false: the spec's stand in, and the UI says so once). */
export function hasOwnParameters(model: Pick<ModelRecord, 'parameters'>): boolean {
  return model.parameters !== undefined;
}

/** What the app and the CLI show for a model whose service sends no offers or prices. */
export const PRICE_UNKNOWN = 'price known after generation';

/** Prompt length as the service counts it: Unicode code points, not UTF-16 units (an emoji is one). */
export function promptLength(prompt: string): number {
  let n = 0;
  for (const _ of prompt) n++;
  return n;
}

/** The spec's prompt limit for a kind of generation. */
export function promptLimitFor(media: string): number {
  return media === 'image' ? CONTENT_LIMITS.promptImageChars : CONTENT_LIMITS.promptVideoChars;
}

/** Why a prompt cannot be sent (empty or too long, in code points), or null. One check for every layer. */
export function promptProblem(prompt: string, media: string): string | null {
  if (prompt.length === 0) return 'prompt is required';
  const limit = promptLimitFor(media);
  return promptLength(prompt) > limit ? `prompt must be at most ${limit} characters` : null;
}
