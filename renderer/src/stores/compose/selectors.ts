import type { ModelRecord } from '../../../../shared/api/model-records.ts';
import type { RoutingPreviewRow } from '../../../../shared/api/routing.ts';
import { CONTENT_LIMITS } from '../../../../shared/api/constants.ts';
import { parametersOf, promptLength, promptLimitFor } from '../../../../shared/api/spec-rules.ts';
import { formatBytes } from '../../lib/format.ts';
import { takesEndFrame } from '../../../../shared/api/model-parameters.ts';
import type { JobRequestInput } from '../../../../shared/ipc/schemas/jobs.ts';
import type { ComposeState, StartFrame } from './initialState.ts';
import { modelParamsBlocker, modelParamValues } from './modelParams.ts';

export function promptLimit(state: Pick<ComposeState, 'media'>): number {
  return promptLimitFor(state.media);
}

/** Characters as the service counts them (code points, so an emoji counts once). */
export { promptLength };

export function isPromptOverLimit(state: Pick<ComposeState, 'media' | 'prompt'>): boolean {
  return promptLength(state.prompt) > promptLimit(state);
}

/** Why Generate is disabled, or null when it is ready. */
export function generateBlocker(state: ComposeState, model: ModelRecord | undefined): string | null {
  if (state.submitting) return 'Submitting…';
  if (state.prompt.trim().length === 0) return 'Write a prompt first';
  if (isPromptOverLimit(state)) return `The prompt is over the ${promptLimit(state)}-character limit`;
  if (!model) return 'Pick a model';
  if (state.startFrameError) return state.startFrameError;
  if (state.startFrame && parametersOf(model).image_url?.supported === false)
    return 'This model does not take a start frame';
  if (takesEndFrame(model) && state.media === 'video') {
    if (state.endFrameError) return state.endFrameError;
    if (state.endFrame && !state.startFrame) return 'An end frame needs a start frame';
  }
  return modelParamsBlocker(state, model);
}

/** The end frame a submit or preview sends: the slot's, for a video model that takes one. */
export function endFrameFor(
  state: Pick<ComposeState, 'media' | 'endFrame' | 'variationOf'>,
  model: ModelRecord | undefined,
): StartFrame | null {
  return state.media === 'video' && !state.variationOf && takesEndFrame(model) ? state.endFrame : null;
}

/** Routing only applies when no provider is pinned. */
export function isRoutingDisabled(state: Pick<ComposeState, 'provider'>): boolean {
  return state.provider !== null;
}

/** The preview row the submit gets: the selected mode's, or the pinned provider's. */
export function selectedRow(state: Pick<ComposeState, 'preview' | 'provider' | 'routing'>): RoutingPreviewRow | null {
  const data = state.preview.data;
  if (!data) return null;
  // Pinned: routing is bypassed and every row names the provider; the body's own mode is the one sent.
  const mode = state.provider ? data.routing : state.routing;
  return data.rows.find((r) => r.routing === mode) ?? null;
}

/** The creator's words for a request parameter routing drops. */
const DROPPED_WORDS: Readonly<Record<string, string>> = {
  image_url: 'start frame',
  end_image_url: 'end frame',
  style: 'style',
  seed: 'seed',
  audio: 'sound',
  aspect_ratio: 'aspect ratio',
};
export function droppedLabel(parameter: string): string {
  return DROPPED_WORDS[parameter] ?? parameter.replaceAll('_', ' ');
}

/** The model id sent on the wire: `base/slug`, with `:version` when pinned. */
export function wireModelId(model: ModelRecord, version: string | null): string {
  const base = `${model.base}/${model.slug}`;
  return version ? `${base}:${version}` : base;
}

/**
 * The job request the form makes (docs/architecture.md, "A generation's trip"): the v1 fields and
 * `kind`; the start frame is the composer's until submit resolves it (api.ts).
 */
export function buildRequest(state: ComposeState, model: ModelRecord): JobRequestInput {
  const p = state.params;
  const rules = parametersOf(model);
  const request: JobRequestInput = {
    kind: state.media,
    model: wireModelId(model, state.version),
    prompt: state.prompt.trim(),
    public: p.public,
  };
  if (state.provider) request.provider = state.provider;
  else request.routing = state.routing;
  if (state.media === 'video' && rules.duration && p.duration !== undefined) request.duration = p.duration;
  if (rules.size && p.size) request.size = p.size;
  if (rules.style && p.style) request.style = p.style;
  if (rules.aspect_ratio && p.aspect_ratio) request.aspect_ratio = p.aspect_ratio;
  if (p.seed !== undefined) request.seed = p.seed;
  const own = modelParamValues(state, model);
  if (Object.keys(own).length > 0) request.parameters = own;
  return request;
}

/** Defaults from the model's rules: duration at its default, the default size, and so on. */
export function defaultParams(
  model: ModelRecord,
  keep: Pick<ComposeState['params'], 'public' | 'seed'>,
): ComposeState['params'] {
  const r = parametersOf(model);
  // The seed is the creator's, not the model's: it stays when they try another model.
  const params: ComposeState['params'] = {
    public: keep.public,
    ...(keep.seed !== undefined ? { seed: keep.seed } : {}),
  };
  if (r.duration) params.duration = r.duration.default;
  if (r.size) params.size = r.size.default ?? r.size.values[0];
  if (r.aspect_ratio) params.aspect_ratio = r.aspect_ratio.default ?? r.aspect_ratio.values[0];
  if (r.style?.default) params.style = r.style.default;
  return params;
}

export interface FrameCheck {
  error: string | null;
  warnings: string[];
}

const ACCEPTED = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

/** Checked before any upload: refuse what the service would refuse, warn about what it would resize. */
export function checkStartFrame(
  frame: Pick<StartFrame, 'width' | 'height'> & { bytes?: number; mime?: string; name: string },
): FrameCheck {
  const warnings: string[] = [];
  if (frame.mime !== undefined && !ACCEPTED.includes(frame.mime)) {
    return { error: `${frame.name} is not a PNG, JPEG, WebP or GIF image`, warnings };
  }
  if (frame.bytes !== undefined && frame.bytes > CONTENT_LIMITS.uploadImageBytes) {
    return {
      error: `${frame.name} is ${formatBytes(frame.bytes)}; start frames can be at most ${formatBytes(CONTENT_LIMITS.uploadImageBytes)}. Nothing was uploaded.`,
      warnings,
    };
  }
  if (frame.bytes !== undefined && frame.bytes > CONTENT_LIMITS.uploadImageBytes * 0.75) {
    warnings.push(`Large file (${formatBytes(frame.bytes)}): the upload may take a while`);
  }
  const { width, height } = frame;
  if (width !== undefined && height !== undefined) {
    if (Math.min(width, height) < 256) warnings.push(`Small image (${width}×${height}): the video may look soft`);
    if (Math.max(width, height) > CONTENT_LIMITS.imageMaxDimension)
      warnings.push(`Very large image (${width}×${height}): it will be scaled down`);
  }
  return { error: null, warnings };
}
