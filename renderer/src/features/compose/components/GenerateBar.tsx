import type { ModelRecord } from '../../../../../shared/api/catalog.ts';
import { MOD } from '../../../lib/keys.ts';
import { formatPrice, formatUnitPrice } from '../../../lib/format.ts';
import { useModels } from '../../models/store/index.ts';
import { isOfferDown, priceUnit, providerName } from '../../models/store/selectors.ts';
import { useCompose, MAX_VARIATIONS } from '../store/index.ts';
import { estimatedOffer, estimatePrice, generateBlocker } from '../store/selectors.ts';
import { SubmitAtControl } from './SubmitAtControl.tsx';

export function GenerateBar({
  model,
  onGenerate,
}: {
  model: ModelRecord | undefined;
  onGenerate: (count: number) => void;
}) {
  const state = useCompose();
  const providers = useModels((s) => s.providers);
  const blocker = generateBlocker(state, model);
  const offer = estimatedOffer(state, model, (o) => isOfferDown(providers, o));
  const price = estimatePrice(state, model, offer);
  // The routing preview: which provider would likely take it, at its own price per unit.
  const via =
    offer && model
      ? `${state.provider ? 'Pinned to' : 'Likely via'} ${providerName(providers, offer)} at ${formatUnitPrice(offer.price, priceUnit(model, offer))}`
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
        </div>
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
