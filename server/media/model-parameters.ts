import type { ModelParameters, ParameterRule } from '../../shared/api/index.ts';
import { INTERFACE_PARAMETERS } from '../../shared/api/index.ts';
import { ApiError } from '../errors.ts';

/**
 * The model's own parameters in a request ("Models may accept further parameters of their own"):
 * each field the model's `parameters` describes (beyond the interface's own fields) is checked
 * against its rule — a clear 400 otherwise — and returned by name, to be handed on to the
 * providers that honour it. A null counts as not given.
 */
export function modelParameterValues(raw: unknown, modelId: string, rules: ModelParameters): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null) return {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if ((INTERFACE_PARAMETERS as readonly string[]).includes(name) || !Object.hasOwn(rules, name)) continue;
    if (value === null || value === undefined) continue;
    out[name] = checkValue(modelId, name, rules[name] as ParameterRule, value);
  }
  return out;
}

function checkValue(modelId: string, name: string, rule: ParameterRule, value: unknown): unknown {
  const fail = (what: string): never => {
    throw new ApiError('invalid_request_error', `${name}: ${modelId} takes ${what}`);
  };
  const type = rule.type ?? inferType(rule);
  if (type === 'boolean' && typeof value !== 'boolean') fail('true or false');
  if (type === 'string' && typeof value !== 'string') fail('a string');
  if ((type === 'number' || type === 'integer') && (typeof value !== 'number' || !Number.isFinite(value)))
    fail(type === 'integer' ? 'a whole number' : 'a number');
  if (type === 'integer' && !Number.isInteger(value)) fail('a whole number');
  if (type === undefined && !['string', 'number', 'boolean'].includes(typeof value))
    fail('a string, number or boolean');
  if (typeof value === 'number') {
    if (rule.min !== undefined && value < rule.min) fail(`at least ${rule.min}, not ${value}`);
    if (rule.max !== undefined && value > rule.max) fail(`at most ${rule.max}, not ${value}`);
  }
  if (typeof value === 'string' && rule.maxLength !== undefined && value.length > rule.maxLength)
    fail(`at most ${rule.maxLength} characters, not ${value.length}`);
  if (rule.values !== undefined && !rule.values.includes(value as string | number))
    fail(`one of ${rule.values.join(', ')}`);
  return value;
}

function inferType(rule: ParameterRule): ParameterRule['type'] {
  const first = rule.values?.[0] ?? rule.default;
  if (typeof first === 'string') return 'string';
  if (typeof first === 'boolean') return 'boolean';
  if (typeof first === 'number' || rule.min !== undefined || rule.max !== undefined) return 'number';
  return rule.maxLength !== undefined ? 'string' : undefined;
}
