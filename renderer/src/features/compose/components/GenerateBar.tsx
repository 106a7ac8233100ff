import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { PRICE_UNKNOWN } from '../../../../../shared/api/spec-rules.ts';
import { MOD } from '../../../lib/shortcut-labels.ts';
import { formatPrice } from '../../../lib/format.ts';
import { useCompose, MAX_VARIATIONS } from '../../../stores/compose/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { sizeLimit } from '../../../stores/compose/estimate.ts';
import { generateBlocker, selectedRow } from '../../../stores/compose/selectors.ts';
import { SubmitAtControl } from './SubmitAtControl.tsx';

export function GenerateBar({
  model,
  onGenerate,
}: {
  model: ModelRecord | undefined;
  onGenerate: (count: number) => void;
}) {
  const state = useCompose();
  const blocker = generateBlocker(state, model);
  // The service's routing preview for the selected mode: what the submit gets, never a guess.
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
  return (
    <div className="generate-bar" role="group" aria-label="Generate">
      <div className="grow">
        <div className="faint" style={{ fontSize: 12 }}>
          Estimated price
        </div>
        <div className="row" style={{ alignItems: 'baseline' }}>
          <span className="price" aria-label="Estimated price">
            {price === null ? '—' : formatPrice(price)}
          </span>
          {price !== null && (
            <span className="faint" style={{ fontSize: 12 }}>
              ×{state.variationOf?.count ?? state.variations} ={' '}
              {formatPrice(price * (state.variationOf?.count ?? state.variations))}
            </span>
          )}
        </div>
        <div className="faint" style={{ fontSize: 12 }}>
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
          <div className="faint" style={{ fontSize: 12 }} data-testid="estimate-why">
            Above the model’s “from {limit.from}”: {limit.why} ({limit.chosen})
          </div>
        )}
      </div>
      {!state.variationOf && (
        <div className="row" style={{ gap: 6 }}>
          <label className="visually-hidden" htmlFor="variations">
            Variations
          </label>
          <input
            id="variations"
            className="input"
            style={{ width: 64, height: 44 }}
            type="number"
            min={2}
            max={MAX_VARIATIONS}
            value={state.variations}
            onChange={(e) => state.setVariations(Number(e.target.value))}
          />
          <button
            type="button"
            className="btn btn-large"
            disabled={blocker !== null}
            onClick={() => onGenerate(state.variations)}
          >
            Generate ×{state.variations}
          </button>
        </div>
      )}
      <SubmitAtControl />
      <button
        type="button"
        className="btn btn-primary btn-large"
        disabled={blocker !== null}
        aria-keyshortcuts="Control+Enter Meta+Enter"
        title={blocker ?? `Generate (${MOD}Enter)`}
        onClick={() => onGenerate(1)}
      >
        {state.submitting
          ? 'Submitting…'
          : state.variationOf
            ? `Make variations ×${state.variationOf.count}`
            : 'Generate'}
        <span className="kbd" aria-hidden="true">
          {MOD}↵
        </span>
      </button>
    </div>
  );
}
