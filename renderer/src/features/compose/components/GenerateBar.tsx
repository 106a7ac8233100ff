import { useId } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { PRICE_UNKNOWN } from '../../../../../shared/api/spec-rules.ts';
import { MOD } from '../../../lib/shortcut-labels.ts';
import { formatDate, formatPrice } from '../../../lib/format.ts';
import { useCompose, MAX_VARIATIONS } from '../../../stores/compose/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { sizeLimit } from '../../../stores/compose/estimate.ts';
import { generateBlocker, selectedRow } from '../../../stores/compose/selectors.ts';

/**
 * The dock's right end: the price estimate (the service's routing preview for the selected mode,
 * never a guess), ×N, and Generate · $price. The button's name stays "Generate"; its price is its
 * description, so assistive technology reads both.
 */
export function GenerateBar({
  model,
  onGenerate,
}: {
  model: ModelRecord | undefined;
  onGenerate: (count: number) => void;
}) {
  const id = useId();
  const state = useCompose();
  const blocker = generateBlocker(state, model);
  const row = selectedRow(state);
  const price = row?.price ?? null;
  const providers = useModels((s) => s.providers);
  // The model card says "from" its cheapest provider's price: an estimate above it says why.
  const limit =
    model && row?.provider && !state.variationOf
      ? sizeLimit(model, state.params.size, row.provider.id, providers)
      : null;
  const via = state.variationOf
    ? 'Variations are routed by the service from their source video'
    : row?.error
      ? `Would fail: ${row.error.message}`
      : row?.provider
        ? `${state.provider ? 'Pinned to' : 'Via'} ${row.provider.name}`
        : state.preview.status === 'loading'
          ? 'Asking the service for a price…'
          : model && !model.providers
            ? // A service without offers (and so without a preview): docs/api.md "Extensions".
              `${PRICE_UNKNOWN.charAt(0).toUpperCase()}${PRICE_UNKNOWN.slice(1)}; the service routes it`
            : state.preview.error
              ? `No price: ${state.preview.error}`
              : null;
  const n = state.variationOf?.count ?? state.variations;
  return (
    <div className="generate-bar" role="group" aria-label="Generate">
      <div className="generate-estimate grow">
        <div className="row" style={{ alignItems: 'baseline', gap: 6 }}>
          <span className="faint">Estimate</span>
          <span className="price" aria-label="Estimated price" id={`${id}-price`}>
            {price === null ? '—' : formatPrice(price)}
          </span>
          {price !== null && (
            <span className="faint">
              ×{n} = {formatPrice(price * n)}
            </span>
          )}
        </div>
        <div className="faint generate-why">
          {blocker ?? via ?? 'Ready'}
          {state.preview.status === 'error' && model && (
            <>
              {' '}
              <button
                type="button"
                className="btn btn-small btn-ghost"
                aria-label="Retry the price"
                onClick={() => useCompose.getState().refreshPreview(model)}
              >
                Retry
              </button>
            </>
          )}
        </div>
        {limit && (
          <div className="faint generate-why" data-testid="estimate-why">
            Above the model’s “from {limit.from}”: {limit.why} ({limit.chosen})
          </div>
        )}
        {state.submitAt && (
          <div className="generate-why" role="status">
            Scheduled for {formatDate(state.submitAt)} (More options)
          </div>
        )}
      </div>
      {!state.variationOf && (
        <div className="row" style={{ gap: 6, flexWrap: 'nowrap' }}>
          <label className="visually-hidden" htmlFor="variations">
            Variations
          </label>
          <input
            id="variations"
            className="input"
            style={{ width: 56 }}
            type="number"
            min={2}
            max={MAX_VARIATIONS}
            value={state.variations}
            onChange={(e) => state.setVariations(Number(e.target.value))}
          />
          <button
            type="button"
            className="btn"
            disabled={blocker !== null}
            onClick={() => onGenerate(state.variations)}
          >
            Generate ×{state.variations}
            {/* Each of the N takes is charged: the button says what the batch costs before it is pressed. */}
            {price !== null && (
              <span className="btn-price" aria-hidden="true">
                {` · ${formatPrice(price * state.variations)}`}
              </span>
            )}
          </button>
        </div>
      )}
      <button
        type="button"
        className="btn btn-primary btn-large"
        disabled={blocker !== null}
        aria-keyshortcuts="Control+Enter Meta+Enter"
        aria-label={state.variationOf ? `Make variations ×${state.variationOf.count}` : 'Generate'}
        aria-describedby={`${id}-price`}
        title={blocker ?? `Generate (${MOD}Enter)`}
        onClick={() => onGenerate(1)}
      >
        {state.submitting
          ? 'Submitting…'
          : state.variationOf
            ? `Make variations ×${state.variationOf.count}`
            : 'Generate'}
        {price !== null && !state.submitting && (
          <span className="btn-price" aria-hidden="true">
            {` · ${formatPrice(price * (state.variationOf?.count ?? 1))}`}
          </span>
        )}
        <span className="kbd" aria-hidden="true">
          {MOD}↵
        </span>
      </button>
    </div>
  );
}
