import { useId } from 'react';
import type { ModelRecord } from '../../../../../shared/api/catalog.ts';
import { ROUTING_EXPLANATIONS, ROUTING_MODES } from '../../../../../shared/api/constants.ts';
import { formatUnitPrice } from '../../../lib/format.ts';
import { useModels } from '../../models/store/index.ts';
import { isOfferDown, priceUnit, providerName } from '../../models/store/selectors.ts';
import { useCompose } from '../store/index.ts';
import { isRoutingDisabled } from '../store/selectors.ts';

const ROUTING_LABELS = { optimal: 'Optimal', cheapest: 'Cheapest', compatible: 'Compatible' } as const;

export function ProviderRouting({ model }: { model: ModelRecord | undefined }) {
  const id = useId();
  const provider = useCompose((s) => s.provider);
  const routing = useCompose((s) => s.routing);
  const setProvider = useCompose((s) => s.setProvider);
  const setRouting = useCompose((s) => s.setRouting);
  const providers = useModels((s) => s.providers);
  const disabled = isRoutingDisabled({ provider });
  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>Provider and routing</h3>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-p`}>
          Provider
        </label>
        <select
          id={`${id}-p`}
          className="select"
          value={provider ?? ''}
          onChange={(e) => setProvider(e.target.value || null)}
          disabled={!model}
        >
          <option value="">Automatic (routing decides)</option>
          {model?.providers.map((o) => (
            <option key={o.id} value={o.id}>
              {providerName(providers, o)} — {formatUnitPrice(o.price, priceUnit(model, o))}
              {isOfferDown(providers, o) ? ' (unavailable)' : ''}
            </option>
          ))}
        </select>
      </div>
      <fieldset className="routing-options" disabled={disabled} style={{ border: 0, padding: 0, margin: 0 }}>
        <legend className="field-label" style={{ marginBottom: 6 }}>
          Routing{disabled ? ' — off while a provider is pinned' : ''}
        </legend>
        {ROUTING_MODES.map((mode) => (
          <label key={mode} className="routing-option">
            <input
              type="radio"
              name={`${id}-routing`}
              value={mode}
              checked={routing === mode}
              onChange={() => setRouting(mode)}
              disabled={disabled}
              aria-labelledby={`${id}-${mode}-name`}
              aria-describedby={`${id}-${mode}`}
            />
            <span id={`${id}-${mode}-name`} style={{ fontWeight: 600 }}>
              {ROUTING_LABELS[mode]}
            </span>
            <span id={`${id}-${mode}`} className="explain">
              {ROUTING_EXPLANATIONS[mode]}
            </span>
          </label>
        ))}
      </fieldset>
    </section>
  );
}
