import type { ModelParameters, ParameterRule } from '../../shared/api/index.ts';
import { INTERFACE_PARAMETERS } from '../../shared/api/index.ts';
import { parameterProblem } from '../../shared/api/model-parameters.ts';
import { ApiError } from '../errors.ts';

/**
 * The model's own parameters in a request ("Models may accept further parameters of their own"):
 * each field the model's `parameters` describes (beyond the interface's own fields) is checked
 * against its rule — a clear 400 otherwise — and returned by name, to be handed on to the
 * providers that honour it. A null counts as not given. The rule check is the one the app's
 * Compose form applies before submit (shared/api/model-parameters.ts).
 */
export function modelParameterValues(raw: unknown, modelId: string, rules: ModelParameters): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null) return {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if ((INTERFACE_PARAMETERS as readonly string[]).includes(name) || !Object.hasOwn(rules, name)) continue;
    if (value === null || value === undefined) continue;
    const problem = parameterProblem(rules[name] as ParameterRule, value);
    if (problem !== null) throw new ApiError('invalid_request_error', `${name}: ${modelId} takes ${problem}`);
    out[name] = value;
  }
  return out;
}
