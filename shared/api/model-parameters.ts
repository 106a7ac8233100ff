import type { ModelParameters, ModelProviderOffer, ModelRecord, ParameterRule } from './model-records.ts';
import { parametersOf } from './spec-rules.ts';
import { INTERFACE_PARAMETERS } from './constants.ts';

/**
 * A model's own parameters ("Models may accept further parameters of their own", docs/api.md):
 * the one rule check that the service applies to a request (a 400 with the rule) and the app's
 * Compose form applies before submit (docs/workflows.md, "More settings"), so the two cannot drift.
 */
export type ParameterValue = string | number | boolean;

/** The model's own parameters with their rules: the keys of `parameters` that are not interface fields. */
export function ownParameterRules(rules: ModelParameters): Array<[string, ParameterRule]> {
  return Object.entries(rules).filter(
    (entry): entry is [string, ParameterRule] =>
      !(INTERFACE_PARAMETERS as readonly string[]).includes(entry[0]) &&
      typeof entry[1] === 'object' &&
      entry[1] !== null,
  );
}

/** The rule's type, or the one its values, default or bounds imply (records from other services may omit it). */
export function parameterType(rule: ParameterRule): ParameterRule['type'] {
  if (rule.type !== undefined) return rule.type;
  const first = rule.values?.[0] ?? rule.default;
  if (typeof first === 'string') return 'string';
  if (typeof first === 'boolean') return 'boolean';
  if (typeof first === 'number' || rule.min !== undefined || rule.max !== undefined) return 'number';
  return rule.maxLength !== undefined ? 'string' : undefined;
}

/**
 * What the rule takes, when `value` breaks it ("at most 1, not 2"), or null when it keeps it.
 * Callers say whose parameter it is: the service as `name: model takes …`.
 */
export function parameterProblem(rule: ParameterRule, value: unknown): string | null {
  const type = parameterType(rule);
  if (type === 'image') return isHttpUrl(value) ? null : 'an image URL (http or https)';
  if (type === 'boolean' && typeof value !== 'boolean') return 'true or false';
  if (type === 'string' && typeof value !== 'string') return 'a string';
  if ((type === 'number' || type === 'integer') && (typeof value !== 'number' || !Number.isFinite(value)))
    return type === 'integer' ? 'a whole number' : 'a number';
  if (type === 'integer' && !Number.isInteger(value)) return 'a whole number';
  if (type === undefined && !['string', 'number', 'boolean'].includes(typeof value))
    return 'a string, number or boolean';
  if (typeof value === 'number') {
    if (rule.min !== undefined && value < rule.min) return `at least ${rule.min}, not ${value}`;
    if (rule.max !== undefined && value > rule.max) return `at most ${rule.max}, not ${value}`;
  }
  if (typeof value === 'string' && rule.maxLength !== undefined && value.length > rule.maxLength)
    return `at most ${rule.maxLength} characters, not ${value.length}`;
  if (rule.values !== undefined && !rule.values.includes(value as string | number))
    return `one of ${rule.values.join(', ')}`;
  return null;
}

/** An absolute http(s) URL with a host (the service resolves it; this is only its shape). */
function isHttpUrl(value: unknown): boolean {
  return typeof value === 'string' && /^https?:\/\/[^\s/?#]+[^\s]*$/i.test(value);
}

/** The end frame's parameter: a model that takes one names it so (docs/api.md, "Model parameters"). */
export const END_IMAGE_PARAMETER = 'end_image_url';

/** The names of the model's image parameters (type `image`): pictures, not values to hand on as they are. */
export function imageParameterNames(rules: ModelParameters): string[] {
  return ownParameterRules(rules)
    .filter(([, rule]) => rule.type === 'image')
    .map(([name]) => name);
}

/**
 * Whether a model takes an end frame: a video model whose parameters name `end_image_url` of
 * type `image` (docs/api.md, "Model parameters of type image"). The dock shows its slot from
 * this, the CLI's `--end-image` and the MCP tool's `end_image_url` are checked with it.
 */
export function takesEndFrame(model: ModelRecord | undefined): boolean {
  return (
    model !== undefined &&
    model.media === 'video' &&
    imageParameterNames(parametersOf(model)).includes(END_IMAGE_PARAMETER)
  );
}

/**
 * Whether an offer honours a parameter, as routing reads it: the offer lists it, or (for a
 * parameter that stands for a feature, such as `audio`) has that feature.
 */
export function offerHonours(offer: Pick<ModelProviderOffer, 'parameters' | 'features'>, name: string): boolean {
  return (offer.parameters ?? []).includes(name) || offer.features.includes(name);
}
