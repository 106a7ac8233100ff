import { describePriceEntry } from '../../../../../shared/api/pricing.ts';
import type { RoutingPreviewRow } from '../../../../../shared/api/routing.ts';
import { formatPrice } from '../../../lib/format.ts';
import { droppedLabel } from '../../../stores/compose/selectors.ts';

/**
 * One routing preview row: the provider and price for this request, what it drops, and why (`why`
 * false where every card would say the same, which is then said once).
 */
export function PreviewLine({ row, why = true }: { row: RoutingPreviewRow; why?: boolean }) {
  if (row.error || !row.provider) {
    return (
      <span className="route-line route-error" data-testid="route-error">
        Cannot render this: {row.error?.message ?? row.reason}
      </span>
    );
  }
  return (
    <span className="route-line">
      <span className="route-head">
        <span className="route-provider" data-testid="route-provider">
          {row.provider.name}
        </span>
        <span className="route-price" data-testid="route-price">
          {row.price === null ? '—' : formatPrice(row.price)}
        </span>
      </span>
      {/* The line of the provider's price table that priced it (docs/providers.md, "Prices"). */}
      {row.priceEntry && (
        <span className="route-basis" data-testid="route-basis">
          at {describePriceEntry(row.priceEntry, formatPrice)}
        </span>
      )}
      {row.dropped.length > 0 && (
        <span className="route-drops" data-testid="route-drops">
          Drops {row.dropped.map(droppedLabel).join(', ')}
        </span>
      )}
      {why && <span className="route-why">{row.reason}</span>}
    </span>
  );
}
