import { z } from 'zod';

/**
 * How a synced model names the interface's own fields in its provider's input (docs/providers.md,
 * "Syncing the catalog"): the catalog offer's `inputs`, read from the model's input schema by the
 * sync. The adapters build such a model's body from it; hand-kept models keep their own builders.
 */
export const INPUT_FIELDS = ['prompt', 'duration', 'size', 'image_url', 'seed', 'n', 'audio', 'aspect_ratio'] as const;
export type InputField = (typeof INPUT_FIELDS)[number];

/**
 * How a value is written: as text (`"5"`), a number, seconds with a unit (`"5s"`), text in upper
 * case (`"768P"`), or (a size) an object `{width, height}`.
 */
export const INPUT_FORMATS = ['text', 'number', 'seconds', 'upper', 'size-object'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export const OfferInput = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be an input name (letters, digits, _)'),
  format: z.enum(INPUT_FORMATS).optional(),
  /** The only values the model takes (aspect ratios): another value is left to the model's default. */
  values: z.array(z.string()).optional(),
});
export type OfferInput = z.infer<typeof OfferInput>;

export const OfferInputs = z.strictObject(
  Object.fromEntries(INPUT_FIELDS.map((f) => [f, OfferInput.optional()])) as Record<
    InputField,
    z.ZodOptional<typeof OfferInput>
  >,
);
export type OfferInputs = z.infer<typeof OfferInputs>;

/** What mappedInput reads of a provider task (contract.ts ProviderTask). */
export interface MappedTask {
  kind: 'video' | 'image';
  prompt: string;
  style?: string;
  size: string;
  width: number;
  height: number;
  aspectRatio: string;
  durationSeconds: number;
  count: number;
  seed?: number;
  audio?: boolean;
  parameters: Record<string, unknown>;
}

function written(value: string | number, format: InputFormat | undefined): unknown {
  switch (format) {
    case 'text':
      return String(value);
    case 'number':
      return typeof value === 'number' ? value : Number(value);
    case 'seconds':
      return `${value}s`;
    case 'upper':
      return String(value).toUpperCase();
    default:
      return value;
  }
}

/**
 * The body of a synced model: the request's own parameters by their (the model's) names, then the
 * interface's fields under the model's names, which win (they were validated as v1 fields).
 */
export function mappedInput(
  task: MappedTask,
  inputs: OfferInputs,
  imageUrl: string | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...task.parameters };
  const set = (field: InputField, value: string | number | boolean | undefined) => {
    const input = inputs[field];
    if (!input || value === undefined) return;
    if (input.values && !input.values.includes(String(value))) return;
    body[input.name] = typeof value === 'boolean' ? value : written(value, input.format);
  };
  // No synced model has a style field; the style rides in the prompt.
  body[inputs.prompt?.name ?? 'prompt'] = task.style ? `${task.prompt} (style: ${task.style})` : task.prompt;
  if (task.kind === 'video') set('duration', task.durationSeconds);
  if (inputs.size?.format === 'size-object') body[inputs.size.name] = { width: task.width, height: task.height };
  else set('size', task.size);
  set('image_url', imageUrl);
  set('seed', task.seed);
  if (task.kind === 'image') set('n', task.count);
  set('audio', task.audio);
  if (!imageUrl && task.parameters['aspect_ratio'] === undefined) set('aspect_ratio', task.aspectRatio);
  return body;
}
