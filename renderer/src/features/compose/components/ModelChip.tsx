import { useCallback, useRef, useState } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { PRICE_UNKNOWN } from '../../../../../shared/api/spec-rules.ts';
import { formatUnitPrice } from '../../../lib/format.ts';
import { useDismiss } from '../../../lib/useDismiss.ts';
import { useModels } from '../../../stores/models/index.ts';
import { priceRange, priceUnit } from '../../../stores/models/selectors.ts';
import { ModelPicker } from './ModelPicker.tsx';

/** "from $0.010 / s": the model's own price, on its chip. */
export function modelPriceText(model: ModelRecord): string {
  if (!model.providers) return PRICE_UNKNOWN;
  const range = priceRange(model);
  if (!range) return 'No providers';
  const unit = priceUnit(model, model.providers[0]);
  return range.min === range.max ? formatUnitPrice(range.min, unit) : `from ${formatUnitPrice(range.min, unit)}`;
}

/** The dock's model chip: the model and its price; it opens the model list as a popover. */
export function ModelChip({ model }: { model: ModelRecord | undefined }) {
  const [open, setOpen] = useState(false);
  const status = useModels((s) => s.status);
  const error = useModels((s) => s.error);
  const box = useRef<HTMLDivElement>(null);
  const close = useCallback(() => setOpen(false), []);
  useDismiss(open, box, close);
  return (
    <div className="model-chip" ref={box}>
      <button
        type="button"
        className="chip chip-strong"
        aria-expanded={open}
        aria-haspopup="listbox"
        onClick={() => setOpen(!open)}
      >
        <span className="visually-hidden">Model: </span>
        {model ? (
          <>
            {model.name} <span className="chip-price">{modelPriceText(model)}</span>
          </>
        ) : (
          'Pick a model'
        )}{' '}
        ▾
      </button>
      {/* The list's load is said on the dock itself, not only inside the closed popover: a list
          that never comes must not leave Generate disabled without a word (docs/workflows.md). */}
      {!open && status === 'loading' && (
        <span aria-label="Loading models" role="status" className="faint">
          Loading models…
        </span>
      )}
      {!open && status === 'error' && (
        <span className="notice notice-error" role="alert">
          <span className="grow">Could not load models: {error}</span>
          <button type="button" className="btn btn-small" onClick={() => void useModels.getState().load()}>
            Retry
          </button>
        </span>
      )}
      {open && (
        <div className="model-popover">
          <ModelPicker selected={model} />
        </div>
      )}
    </div>
  );
}
