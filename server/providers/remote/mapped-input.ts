import type { ProviderTask } from './contract.ts';
import type { InputField, InputFormat, OfferInputs } from './inputs.ts';

/**
 * A synced model's provider body, built from its offer's `inputs` (inputs.ts; docs/providers.md,
 * "Syncing the catalog"): the fal and Replicate adapters use it for models without a
 * hand-written builder.
 */

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
  task: ProviderTask,
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
