import { INTERFACE_PARAMETERS } from '../../../shared/api/index.ts';
import type { Feature, ParameterRule } from '../../../shared/api/index.ts';
import type { OfferInputs } from '../../providers/remote/inputs.ts';
import { plainText } from './fetch-json.ts';
import type { InputSchema, ListedModel } from './listing.ts';

/**
 * A listed model's input schema read as the catalog's terms (docs/providers.md, "Syncing the
 * catalog"): the interface's own fields found under the model's own names (`inputs`), the
 * model's other scalar inputs as its own parameters, and what the offer can do.
 */
export interface SchemaReading {
  /** The interface's rules (duration, size, n, aspect_ratio, audio…) and the model's own parameters. */
  parameters: Record<string, unknown>;
  /** The model's own parameters the offer honours (by the model's names). */
  own: string[];
  inputs: OfferInputs;
  features: Feature[];
  sizes: string[];
  durations?: number[];
}

/** Inputs a start frame may be called, in order of preference. */
const IMAGE_INPUTS = ['image_url', 'start_image', 'first_frame_image', 'image', 'start_image_url', 'input_image'];
const COUNT_INPUTS = ['num_images', 'num_outputs'];
/** Inputs that are about how the provider answers, not the picture. */
const NOT_PARAMETERS = new Set(['sync_mode', 'webhook', 'webhook_url', 'webhook_events_filter']);
const VIDEO_SIZES = ['360p', '480p', '720p', '1080p'];
/** The image sizes synced image models offer: any `WxH` within bounds, these listed. */
export const IMAGE_SIZE_RULE = {
  values: ['1024x1024', '1344x768', '768x1344', '512x512'],
  default: '1024x1024',
  minWidth: 256,
  minHeight: 256,
  maxWidth: 1440,
  maxHeight: 1440,
};
const MAX_OWN_PARAMETERS = 40;
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

export function readInputSchema(model: ListedModel): SchemaReading {
  const { properties } = model.input;
  const media = model.task === 'text_to_image' ? 'image' : 'video';
  const inputs: OfferInputs = { prompt: { name: 'prompt' } };
  const parameters: Record<string, unknown> = {};
  const features: Feature[] = [];
  const mapped = new Set<string>(['prompt']);
  const take = (name: string) => mapped.add(name);

  let sizes: string[];
  let durations: number[] | undefined;
  if (media === 'video') {
    const image = IMAGE_INPUTS.find((n) => isString(properties[n]));
    if (image) {
      inputs.image_url = { name: image };
      take(image);
      parameters['image_url'] = { supported: true };
    }
    const imageRequired = image !== undefined && model.input.required.includes(image);
    if (model.task === 'text_to_video' && !imageRequired) features.push('text_to_video');
    if (image) features.push('image_to_video');
    const duration = readDuration(properties['duration']);
    parameters['duration'] = duration.rule;
    durations = duration.rule.values;
    if (duration.format) {
      inputs.duration = { name: 'duration', format: duration.format };
      take('duration');
    }
    const resolution = readResolution(properties['resolution']);
    sizes = resolution.sizes;
    parameters['size'] = { values: sizes, default: resolution.default };
    if (resolution.format) {
      inputs.size = { name: 'resolution', format: resolution.format };
      take('resolution');
    }
    const audio = properties['generate_audio'];
    if (audio?.['type'] === 'boolean') {
      inputs.audio = { name: 'generate_audio' };
      take('generate_audio');
      features.push('audio');
      parameters['audio'] = rule(audio, 'Ask for a soundtrack.');
    }
  } else {
    features.push('text_to_image');
    sizes = [`${IMAGE_SIZE_RULE.maxWidth}x${IMAGE_SIZE_RULE.maxHeight}`];
    parameters['size'] = { ...IMAGE_SIZE_RULE, values: [...IMAGE_SIZE_RULE.values] };
    if (properties['image_size']) {
      inputs.size = { name: 'image_size', format: 'size-object' };
      take('image_size');
    }
    const count = COUNT_INPUTS.find((n) => properties[n]?.['type'] === 'integer');
    const max = count ? Math.max(1, Math.min(4, num(properties[count]?.['maximum']) ?? 4)) : 1;
    parameters['n'] = { min: 1, max, default: 1 };
    if (count) {
      inputs.n = { name: count, format: 'number' };
      take(count);
    }
  }
  if (properties['seed'] && ['integer', 'number'].includes(String(properties['seed']['type']))) {
    inputs.seed = { name: 'seed', format: 'number' };
    take('seed');
    features.push('seed');
  }
  const ratio = enumStrings(properties['aspect_ratio']);
  if (ratio) inputs.aspect_ratio = { name: 'aspect_ratio', values: ratio };
  const own = ownParameters(model.input, mapped, parameters);
  return { parameters, own, inputs, features, sizes, ...(durations ? { durations } : {}) };
}

/** The model's other scalar inputs, as parameter rules under their own names. */
function ownParameters(input: InputSchema, mapped: Set<string>, parameters: Record<string, unknown>): string[] {
  const own: string[] = [];
  for (const [name, property] of Object.entries(input.properties)) {
    if (own.length >= MAX_OWN_PARAMETERS) break;
    if (mapped.has(name) || NOT_PARAMETERS.has(name) || !NAME.test(name)) continue;
    if ((INTERFACE_PARAMETERS as readonly string[]).includes(name) || name === 'audio') continue;
    // Files (other frames, masks, audio) cannot be passed through the interface.
    if (property['format'] === 'uri' || /_url$|_urls$/.test(name)) continue;
    const parameter = rule(property);
    if (!parameter) continue;
    if (name === 'aspect_ratio' && !parameter.values) continue;
    parameters[name] = parameter;
    own.push(name);
  }
  return own;
}

type Type = 'string' | 'number' | 'integer' | 'boolean';

function rule(property: Record<string, unknown> | undefined, fallback?: string): ParameterRule | undefined {
  if (!property) return undefined;
  const values = enumValues(property['enum']);
  const raw = property['type'];
  const type: Type | undefined =
    raw === 'string' || raw === 'number' || raw === 'integer' || raw === 'boolean'
      ? raw
      : values
        ? typeof values[0] === 'number'
          ? 'number'
          : 'string'
        : undefined;
  if (!type) return undefined;
  const out: ParameterRule = { type };
  if (values) out.values = values;
  const min = num(property['minimum']);
  const max = num(property['maximum']);
  if ((type === 'number' || type === 'integer') && min !== undefined) out.min = min;
  if ((type === 'number' || type === 'integer') && max !== undefined) out.max = max;
  const maxLength = num(property['maxLength']);
  if (type === 'string' && maxLength !== undefined && Number.isInteger(maxLength) && maxLength > 0)
    out.maxLength = maxLength;
  const def = property['default'];
  if (scalarOf(type, def) && (!values || values.includes(def as string | number))) out.default = def as string;
  const description = plainText(property['description'] ?? property['title'], 300) || fallback;
  if (description) out.description = description;
  return out;
}

function scalarOf(type: Type, value: unknown): boolean {
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === 'string') return typeof value === 'string' && value.length <= 2000;
  return typeof value === 'number' && Number.isFinite(value) && (type === 'number' || Number.isInteger(value));
}

function readDuration(property: Record<string, unknown> | undefined): {
  rule: { min: number; max: number; default: number; values?: number[] };
  format?: 'text' | 'number' | 'seconds';
} {
  const values = enumValues(property?.['enum']);
  if (values) {
    const seconds = values.map((v) => Number(String(v).replace(/s$/, ''))).filter((v) => Number.isFinite(v) && v > 0);
    if (seconds.length > 0) {
      const sorted = [...new Set(seconds)].sort((a, b) => a - b);
      const given = property?.['default'];
      const fallback =
        typeof given === 'string' || typeof given === 'number' ? Number(String(given).replace(/s$/, '')) : sorted[0]!;
      const format = typeof values[0] === 'number' ? 'number' : String(values[0]).endsWith('s') ? 'seconds' : 'text';
      return {
        rule: {
          min: sorted[0]!,
          max: sorted.at(-1)!,
          default: sorted.includes(fallback) ? fallback : sorted[0]!,
          values: sorted,
        },
        format,
      };
    }
  }
  const min = num(property?.['minimum']);
  const max = num(property?.['maximum']);
  if (
    property &&
    (property['type'] === 'integer' || property['type'] === 'number') &&
    min &&
    max &&
    min <= max &&
    max <= 600
  ) {
    const def = num(property['default']);
    return { rule: { min, max, default: def !== undefined && def >= min && def <= max ? def : min }, format: 'number' };
  }
  // No duration input (a model counting frames): it renders its own default length, taken as 5 s.
  return { rule: { min: 5, max: 5, default: 5, values: [5] } };
}

function readResolution(property: Record<string, unknown> | undefined): {
  sizes: string[];
  default: string;
  format?: 'text' | 'upper';
} {
  const values = enumStrings(property);
  const known = (values ?? []).filter((v) => VIDEO_SIZES.includes(v.toLowerCase()));
  if (!values || known.length === 0) return { sizes: ['720p'], default: '720p' };
  const sizes = [...new Set(known.map((v) => v.toLowerCase()))];
  const given = property?.['default'];
  const def = typeof given === 'string' ? given.toLowerCase() : '';
  return {
    sizes,
    default: sizes.includes(def) ? def : sizes.at(-1)!,
    format: known.every((v) => v === v.toUpperCase()) ? 'upper' : 'text',
  };
}

function enumValues(value: unknown): Array<string | number> | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > 100) return undefined;
  const out = value
    .filter((v): v is string | number => (typeof v === 'string' && v.length <= 100) || typeof v === 'number')
    .map((v) => (typeof v === 'string' ? plainText(v, 100) : v));
  return out.length === value.length ? out : undefined;
}

function enumStrings(property: Record<string, unknown> | undefined): string[] | undefined {
  const values = enumValues(property?.['enum']);
  const strings = values?.filter((v): v is string => typeof v === 'string');
  return strings && strings.length === values?.length ? strings : undefined;
}

function isString(property: Record<string, unknown> | undefined): boolean {
  return property?.['type'] === 'string';
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
