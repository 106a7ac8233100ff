import { useId, useState } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { hasOwnParameters, parametersOf } from '../../../../../shared/api/spec-rules.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import type { ComposeParams } from '../../../stores/compose/initialState.ts';
import { fieldsFor, type FieldSpec } from './fieldRegistry.ts';
import { MoreSettings } from './MoreSettings.tsx';

function RangeField({ spec }: { spec: Extract<FieldSpec, { kind: 'range' }> }) {
  const id = useId();
  const value = useCompose((s) => s.params[spec.key]) as number | undefined;
  const setParam = useCompose((s) => s.setParam);
  const current = value ?? spec.min;
  return (
    <div className="field">
      <div className="field-label">
        <label htmlFor={id}>{spec.label}</label>
        <output htmlFor={id} style={{ color: 'var(--text)', fontWeight: 600 }}>
          {current}
          {spec.unit}
        </output>
      </div>
      <input
        id={id}
        className="slider"
        type="range"
        min={spec.min}
        max={spec.max}
        step={spec.step}
        value={current}
        aria-valuetext={`${current} ${spec.unit === 's' ? 'seconds' : ''}`.trim()}
        onChange={(e) => setParam(spec.key, Number(e.target.value) as ComposeParams[typeof spec.key])}
      />
    </div>
  );
}

function ChoiceField({ spec }: { spec: Extract<FieldSpec, { kind: 'choice' }> }) {
  const id = useId();
  const value = useCompose((s) => s.params[spec.key]);
  const setParam = useCompose((s) => s.setParam);
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {spec.label}
      </label>
      <select
        id={id}
        className="select"
        value={value === undefined ? '' : String(value)}
        onChange={(e) => {
          const picked = e.target.value || undefined;
          const next = spec.numeric === true && picked !== undefined ? Number(picked) : picked;
          setParam(spec.key, next);
        }}
      >
        {spec.optional && <option value="">None</option>}
        {spec.values.map((v) => (
          <option key={v} value={v}>
            {v}
            {spec.unit ?? ''}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A whole number from min to max, or null. */
function parseSeed(text: string, spec: { min: number; max: number }): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) && n >= spec.min && n <= spec.max ? n : null;
}

/**
 * The seed: empty means a random one. Variations (×N) take consecutive seeds from it, so a seed
 * typed here makes a batch reproducible; the queue shows each job's seed.
 */
function SeedField({ spec }: { spec: Extract<FieldSpec, { kind: 'seed' }> }) {
  const id = useId();
  const seed = useCompose((s) => s.params.seed);
  const variations = useCompose((s) => s.variations);
  const setParam = useCompose((s) => s.setParam);
  // What the creator typed, kept while it is not a seed yet (so the field does not fight them).
  const [draft, setDraft] = useState<string | null>(null);
  const text = draft ?? (seed === undefined ? '' : String(seed));
  const invalid = text.trim() !== '' && parseSeed(text, spec) === null;
  return (
    <div className="field">
      <div className="field-label">
        <label htmlFor={id}>{spec.label}</label>
        {seed !== undefined && (
          <button
            type="button"
            className="btn btn-ghost btn-small"
            onClick={() => {
              setDraft(null);
              setParam('seed', undefined);
            }}
          >
            Random
          </button>
        )}
      </div>
      <input
        id={id}
        className="input"
        inputMode="numeric"
        placeholder="Random"
        aria-invalid={invalid}
        aria-describedby={`${id}-help`}
        value={text}
        onChange={(e) => {
          const value = e.target.value;
          const parsed = parseSeed(value, spec);
          setDraft(parsed === null && value.trim() !== '' ? value : null);
          setParam('seed', parsed ?? undefined);
        }}
      />
      <p id={`${id}-help`} className={invalid ? 'field-help field-error' : 'field-help'}>
        {invalid
          ? `A seed is a whole number from ${spec.min} to ${spec.max}; until then each job gets a random one.`
          : seed === undefined
            ? 'Each job gets a random seed; variations get consecutive ones.'
            : `The same seed, model and prompt give the same result. ×${variations} uses seeds ${seed}–${Math.min(spec.max, seed + variations - 1)}.`}
      </p>
    </div>
  );
}

/**
 * The model's creative controls as chips of the prompt dock (aspect ratio, duration, size, style),
 * made from its parameter rules, so a model's own controls appear without code per model.
 */
export function ParameterChips({ model }: { model: ModelRecord | undefined }) {
  const media = useCompose((s) => s.media);
  const fields = model ? fieldsFor(parametersOf(model), media) : [];
  return (
    <>
      {fields.map((f) =>
        f.kind === 'range' ? (
          <div key={f.key} className="chip-field">
            <RangeField spec={f} />
          </div>
        ) : f.kind === 'choice' ? (
          <div key={f.key} className="chip-field">
            <ChoiceField spec={f} />
          </div>
        ) : null,
      )}
    </>
  );
}

/** The drawer's part of the parameters: the seed, public, and the model's own ("More settings"). */
export function ParametersForm({ model }: { model: ModelRecord | undefined }) {
  const media = useCompose((s) => s.media);
  const isPublic = useCompose((s) => s.params.public);
  const setParam = useCompose((s) => s.setParam);
  const fields = model ? fieldsFor(parametersOf(model), media) : [];
  return (
    <section className="panel" aria-labelledby="params-heading">
      <h3 id="params-heading">Parameters</h3>
      {!model && <p className="faint">Pick a model to see its parameters.</p>}
      {model && !hasOwnParameters(model) && (
        <p className="faint" role="note">
          This service does not describe this model’s parameters: the interface’s own limits apply.
        </p>
      )}
      {fields.map((f) => (f.kind === 'seed' ? <SeedField key={f.key} spec={f} /> : null))}
      <label className="switch">
        <input type="checkbox" checked={isPublic} onChange={(e) => setParam('public', e.target.checked)} />
        Public (shown in the public feed)
      </label>
      {model && <MoreSettings model={model} />}
    </section>
  );
}
