import type { ModelRecord, ParameterRule } from '../../../../shared/api/model-records.ts';
import {
  offerHonours,
  ownParameterRules,
  parameterProblem,
  type ParameterValue,
} from '../../../../shared/api/model-parameters.ts';
import { parametersOf } from '../../../../shared/api/spec-rules.ts';
import type { ComposeState } from './initialState.ts';

/**
 * Compose → "More settings" (docs/workflows.md): the chosen model's own parameters, checked with
 * the rule the service applies (shared/api/model-parameters.ts) before anything is sent.
 */
export interface ModelParam {
  name: string;
  label: string;
  rule: ParameterRule;
  /** Providers of the model that do not honour it (routing drops it for them), by name. */
  ignoredBy: string[];
}

/** Own parameters the main form already shows as fields of their own. */
const MAIN_FORM = new Set(['aspect_ratio']);

const LABELS: Readonly<Record<string, string>> = { cfg_scale: 'CFG scale' };

/** `negative_prompt` → "Negative prompt". */
export function parameterLabel(name: string): string {
  const known = LABELS[name];
  if (known) return known;
  const words = name.replaceAll('_', ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The parameters worth a field: the model's own ones that a provider the request may reach
 * honours. With a provider pinned, only what that provider honours (the service refuses the
 * rest); otherwise those at least one offer honours. A service that sends no offers, or offers
 * that do not list their parameters: all of them.
 */
export function modelParams(model: ModelRecord, provider: string | null): ModelParam[] {
  // Offers that do not list what they honour (another service's) tell nothing: every field shows.
  const offers = model.providers?.some((o) => o.parameters !== undefined) ? model.providers : undefined;
  const out: ModelParam[] = [];
  for (const [name, rule] of ownParameterRules(parametersOf(model))) {
    // An image parameter is a frame slot in the dock (the end frame), not a field here.
    if (MAIN_FORM.has(name) || rule.type === 'image') continue;
    const param = { name, label: parameterLabel(name), rule, ignoredBy: [] as string[] };
    if (offers === undefined) {
      out.push(param);
      continue;
    }
    const pinned = provider === null ? undefined : offers.find((o) => o.id === provider || o.slug === provider);
    if (pinned) {
      if (offerHonours(pinned, name)) out.push(param);
      continue;
    }
    const honouring = offers.filter((o) => offerHonours(o, name));
    if (honouring.length === 0) continue;
    param.ignoredBy = offers.filter((o) => !honouring.includes(o)).map((o) => o.name ?? o.slug);
    out.push(param);
  }
  return out;
}

/** Why a value cannot be sent ("CFG scale takes at most 1, not 2"), or null. */
export function modelParamProblem(param: ModelParam, value: ParameterValue | undefined): string | null {
  if (value === undefined) return null;
  const problem = parameterProblem(param.rule, value);
  return problem === null ? null : `${param.label} takes ${problem}`;
}

/** The first value that breaks its rule, said with its field and the rule; null when all are fine. */
export function modelParamsBlocker(
  state: Pick<ComposeState, 'modelParams' | 'provider'>,
  model: ModelRecord,
): string | null {
  for (const param of modelParams(model, state.provider)) {
    const problem = modelParamProblem(param, state.modelParams[param.name]);
    if (problem) return problem;
  }
  return null;
}

/** The values the request carries: the fields shown, set and valid. */
export function modelParamValues(
  state: Pick<ComposeState, 'modelParams' | 'provider'>,
  model: ModelRecord,
): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  for (const param of modelParams(model, state.provider)) {
    const value = state.modelParams[param.name];
    if (value !== undefined && modelParamProblem(param, value) === null) out[param.name] = value;
  }
  return out;
}

/** The values kept when another model is chosen: only those the new model also has. */
export function keptModelParams(values: ComposeState['modelParams'], model: ModelRecord): ComposeState['modelParams'] {
  const names = new Set(ownParameterRules(parametersOf(model)).map(([name]) => name));
  return Object.fromEntries(Object.entries(values).filter(([name]) => names.has(name)));
}
