import type { ModelParameters, ParameterRule } from '../../../../../shared/api/model-records.ts';
import { parameterType } from '../../../../../shared/api/model-parameters.ts';

/**
 * Which control each of a model's parameter rules becomes. The form is built from the rules, so
 * a new model or parameter needs no new screen: a `{min,max,default}` rule is a slider, a
 * `{values}` rule a choice. `image_url` is the start frame, handled by its own drop zone.
 */
type ParamKey = 'duration' | 'size' | 'style' | 'aspect_ratio';

export type FieldSpec =
  | { kind: 'range'; key: ParamKey; label: string; min: number; max: number; step: number; unit: string }
  /** Every generation request takes a seed (the v1 request's `seed`), whatever the model's rules list. */
  | { kind: 'seed'; key: 'seed'; label: string; min: number; max: number }
  | {
      kind: 'choice';
      key: ParamKey;
      label: string;
      values: string[];
      optional: boolean;
      /** Fixed durations (Kling: 5 or 10 s): the values are numbers, shown with their unit. */
      numeric?: boolean;
      unit?: string;
    };

/** The v1 request's bound on `seed` (shared/api/generations.ts). */
export const MAX_SEED = 2 ** 31 - 1;

const LABELS: Record<string, string> = {
  duration: 'Duration',
  size: 'Size',
  style: 'Style',
  aspect_ratio: 'Aspect ratio',
};
/** Keys the composer knows how to send; others are shown only if the contract grows. */
const SUPPORTED = new Set(['duration', 'size', 'style', 'aspect_ratio']);

export function fieldsFor(parameters: ModelParameters, media: 'video' | 'image'): FieldSpec[] {
  const fields: FieldSpec[] = [];
  for (const [key, rule] of Object.entries(parameters)) {
    if (!rule || typeof rule !== 'object' || !SUPPORTED.has(key)) continue;
    if (key === 'duration' && media !== 'video') continue;
    const r = rule as Record<string, unknown>;
    const label = LABELS[key] ?? key;
    const values = r['values'];
    // A model whose every provider renders only some durations lists them: a choice, not a slider
    // that would offer seconds no provider makes.
    if (
      key === 'duration' &&
      Array.isArray(values) &&
      values.length > 0 &&
      values.every((v) => typeof v === 'number')
    ) {
      fields.push({
        kind: 'choice',
        key,
        label,
        values: values.map(String),
        optional: false,
        numeric: true,
        unit: 's',
      });
    } else if (typeof r['min'] === 'number' && typeof r['max'] === 'number') {
      const span = r['max'] - r['min'];
      fields.push({
        kind: 'range',
        key: key as ParamKey,
        label,
        min: r['min'],
        max: r['max'],
        step: span <= 20 ? 1 : 0.5,
        unit: key === 'duration' ? 's' : '',
      });
    } else if (Array.isArray(r['values'])) {
      fields.push({
        kind: 'choice',
        key: key as ParamKey,
        label,
        values: r['values'] as string[],
        optional: key === 'style' && r['default'] === undefined,
      });
    }
  }
  const order = ['duration', 'size', 'aspect_ratio', 'style', 'seed'];
  fields.push({ kind: 'seed', key: 'seed', label: 'Seed', min: 0, max: MAX_SEED });
  return fields.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
}

/**
 * Which control a model's own parameter becomes under "More settings" (docs/workflows.md): a
 * list of values is a choice, a boolean a switch, a number or integer a number field with the
 * rule's bounds, a long string a text area; anything else a text field.
 */
export type MoreFieldKind = 'select' | 'switch' | 'number' | 'textarea' | 'text';

/** Strings that may run longer than this get a text area (a negative prompt), shorter ones a line. */
const TEXTAREA_FROM = 200;

export function moreFieldKind(rule: ParameterRule): MoreFieldKind {
  const type = parameterType(rule);
  if (rule.values !== undefined && rule.values.length > 0) return 'select';
  if (type === 'boolean') return 'switch';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'string' && (rule.maxLength === undefined || rule.maxLength > TEXTAREA_FROM)) return 'textarea';
  return 'text';
}

/** The number field's step: whole numbers for integers, else a hundredth of the range (any when unbounded). */
export function numberStep(rule: ParameterRule): number | 'any' {
  if (parameterType(rule) === 'integer') return 1;
  if (rule.min === undefined || rule.max === undefined) return 'any';
  const span = rule.max - rule.min;
  return span > 0 ? Number((span / 100).toPrecision(1)) : 'any';
}

/** The help line: the description, the bounds, the default, and who ignores it. */
export function moreFieldHelp(rule: ParameterRule, ignoredBy: readonly string[]): string {
  const parts: string[] = [];
  if (rule.description) parts.push(rule.description.trim().replace(/\.?$/, '.'));
  if (rule.min !== undefined && rule.max !== undefined) parts.push(`From ${rule.min} to ${rule.max}.`);
  else if (rule.min !== undefined) parts.push(`At least ${rule.min}.`);
  else if (rule.max !== undefined) parts.push(`At most ${rule.max}.`);
  if (rule.maxLength !== undefined) parts.push(`Up to ${rule.maxLength.toLocaleString('en-US')} characters.`);
  if (rule.default !== undefined) parts.push(`Default: ${String(rule.default)}.`);
  if (ignoredBy.length > 0) parts.push(`Ignored by ${ignoredBy.join(', ')}.`);
  return parts.join(' ');
}
