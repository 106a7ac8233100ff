import { useId, useState } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import type { ParameterValue } from '../../../../../shared/api/model-parameters.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { modelParamProblem, modelParams, type ModelParam } from '../../../stores/compose/modelParams.ts';
import { moreFieldHelp, moreFieldKind, numberStep } from './fieldRegistry.ts';

interface FieldProps {
  param: ModelParam;
  id: string;
  value: ParameterValue | undefined;
  set: (value: ParameterValue | undefined) => void;
  describedBy: string;
  invalid: boolean;
}

/** The rule's values as options; the empty one leaves the provider's default. */
function SelectInput({ param, id, value, set, describedBy, invalid }: FieldProps) {
  const values = param.rule.values ?? [];
  const fallback = param.rule.default === undefined ? 'Not set' : `Default (${String(param.rule.default)})`;
  return (
    <select
      id={id}
      className="select"
      aria-describedby={describedBy}
      aria-invalid={invalid}
      value={value === undefined ? '' : String(value)}
      onChange={(e) => set(values.find((v) => String(v) === e.target.value))}
    >
      <option value="">{fallback}</option>
      {values.map((v) => (
        <option key={String(v)} value={String(v)}>
          {String(v)}
        </option>
      ))}
    </select>
  );
}

/**
 * A number as typed: kept as text while it is being typed, stored as a number, or NaN when the
 * field holds something that is not one (the check then says so).
 */
function NumberInput({ param, id, value, set, describedBy, invalid }: FieldProps) {
  const [draft, setDraft] = useState(value === undefined ? '' : String(value));
  const { min, max, default: fallback } = param.rule;
  return (
    <input
      id={id}
      className="input"
      type="number"
      inputMode="decimal"
      min={min}
      max={max}
      step={numberStep(param.rule)}
      placeholder={fallback === undefined ? '' : String(fallback)}
      aria-describedby={describedBy}
      aria-invalid={invalid}
      value={draft}
      onChange={(e) => {
        setDraft(e.target.value);
        if (e.target.validity.badInput) set(Number.NaN);
        else set(e.target.value.trim() === '' ? undefined : Number(e.target.value));
      }}
    />
  );
}

function TextInput({ param, id, value, set, describedBy, invalid, long }: FieldProps & { long: boolean }) {
  const props = {
    id,
    className: long ? 'textarea' : 'input',
    placeholder: param.rule.default === undefined ? '' : String(param.rule.default),
    'aria-describedby': describedBy,
    'aria-invalid': invalid,
    value: typeof value === 'string' ? value : '',
    onChange: (e: { target: { value: string } }) => set(e.target.value === '' ? undefined : e.target.value),
  };
  return long ? <textarea rows={2} {...props} /> : <input {...props} />;
}

function MoreField({ param }: { param: ModelParam }) {
  const id = useId();
  const value = useCompose((s) => s.modelParams[param.name]);
  const setModelParam = useCompose((s) => s.setModelParam);
  const set = (next: ParameterValue | undefined) => setModelParam(param.name, next);
  const problem = modelParamProblem(param, value);
  const help = moreFieldHelp(param.rule, param.ignoredBy);
  const props: FieldProps = { param, id, value, set, describedBy: `${id}-help`, invalid: problem !== null };
  const kind = moreFieldKind(param.rule);
  if (kind === 'switch') {
    return (
      <div className="field">
        <label className="switch">
          <input
            id={id}
            type="checkbox"
            aria-describedby={`${id}-help`}
            checked={typeof value === 'boolean' ? value : param.rule.default === true}
            onChange={(e) => set(e.target.checked)}
          />
          {param.label}
        </label>
        <p id={`${id}-help`} className="field-help">
          {help}
        </p>
      </div>
    );
  }
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {param.label}
      </label>
      {kind === 'select' ? (
        <SelectInput {...props} />
      ) : kind === 'number' ? (
        <NumberInput {...props} />
      ) : (
        <TextInput {...props} long={kind === 'textarea'} />
      )}
      <p id={`${id}-help`} className={problem ? 'field-help field-error' : 'field-help'}>
        {problem ?? help}
      </p>
    </div>
  );
}

/**
 * "More settings": the chosen model's own parameters (docs/workflows.md), folded away until
 * opened. Each field follows its rule; a value that breaks it is said under the field, and
 * Generate stays disabled with the same words.
 */
export function MoreSettings({ model }: { model: ModelRecord }) {
  const provider = useCompose((s) => s.provider);
  const params = modelParams(model, provider);
  if (params.length === 0) return null;
  return (
    <details className="more-settings">
      <summary>More settings ({params.length})</summary>
      <div className="more-settings-fields">
        {params.map((p) => (
          // Keyed by model, so a field typed for one model never shows in another's.
          <MoreField key={`${model.id}:${p.name}`} param={p} />
        ))}
      </div>
    </details>
  );
}
