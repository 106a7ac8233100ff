import { useId } from 'react';
import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import { ROUTING_EXPLANATIONS, ROUTING_MODES } from '../../../../../shared/api/constants.ts';
import { useModels } from '../../../stores/models/index.ts';
import { isOfferDown, offerPriceText, providerName } from '../../../stores/models/selectors.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { sharedRouteReason, sizeLimit } from '../../../stores/compose/estimate.ts';
import { isRoutingDisabled } from '../../../stores/compose/selectors.ts';
import { PreviewLine } from './RoutingPreviewLine.tsx';

export const ROUTING_LABELS = { optimal: 'Optimal', cheapest: 'Cheapest', compatible: 'Compatible' } as const;

export function ProviderRouting({ model }: { model: ModelRecord | undefined }) {
  const id = useId();
  const provider = useCompose((s) => s.provider);
  const routing = useCompose((s) => s.routing);
  const setProvider = useCompose((s) => s.setProvider);
  const setRouting = useCompose((s) => s.setRouting);
  const providers = useModels((s) => s.providers);
  const preview = useCompose((s) => s.preview);
  const disabled = isRoutingDisabled({ provider });
  const rows = preview.data?.rows ?? [];
  const pinnedRow = preview.data?.pinned ? rows.find((r) => r.routing === preview.data?.routing) : undefined;
  const size = useCompose((s) => s.params.size);
  const firstProvider = rows[0]?.provider;
  const limit = model && firstProvider ? sizeLimit(model, size, firstProvider.id, providers) : null;
  // Cards that would all explain themselves alike say it once, below them.
  const shared = disabled ? null : sharedRouteReason(rows, limit);
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
          {model?.providers?.map((o) => (
            <option key={o.id} value={o.id}>
              {providerName(providers, o)} — {offerPriceText(model, o)}
              {isOfferDown(providers, o) ? ' (unavailable)' : ''}
            </option>
          ))}
          {/* A service that lists no offers for the model: any of its providers (it refuses one that cannot). */}
          {model &&
            !model.providers &&
            providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
        </select>
      </div>
      {provider && pinnedRow && (
        <div className="routing-option routing-pinned selected" data-testid="route-pinned" aria-live="polite">
          <span style={{ fontWeight: 600 }}>Pinned</span>
          <PreviewLine row={pinnedRow} />
        </div>
      )}
      <fieldset className="routing-options" disabled={disabled} style={{ border: 0, padding: 0, margin: 0 }}>
        <legend className="field-label" style={{ marginBottom: 6 }}>
          Routing{disabled ? ' — off while a provider is pinned' : ''}
        </legend>
        {ROUTING_MODES.map((mode) => (
          <label
            key={mode}
            className={`routing-option${routing === mode && !disabled ? ' selected' : ''}`}
            data-testid={`route-${mode}`}
            title={ROUTING_EXPLANATIONS[mode]}
          >
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
              {disabled || !rows.some((r) => r.routing === mode) ? (
                ROUTING_EXPLANATIONS[mode]
              ) : (
                <PreviewLine row={rows.find((r) => r.routing === mode)!} why={shared === null} />
              )}
            </span>
          </label>
        ))}
        {shared && (
          <p className="field-help route-shared" data-testid="route-shared">
            {shared.sameProvider ? 'Every mode picks the same provider' : 'Every mode'}: {shared.reason}
          </p>
        )}
      </fieldset>
    </section>
  );
}
