import type { ModelRecord } from '../../../../../shared/api/model-records.ts';
import type { ProviderEntry } from '../../../../../shared/ipc/index.ts';
import { formatDate } from '../../../lib/format.ts';
import { offerPriceText } from '../../../stores/models/selectors.ts';

const ERROR_CLASSES: Readonly<Record<string, string>> = {
  auth: 'key refused',
  rate_limited: 'rate limited',
  server: 'server errors',
  timeout: 'timed out',
  content_policy: 'content refused',
  invalid_input: 'input refused',
  malformed: 'unreadable answers',
  failed: 'generations failed',
  canceled: 'canceled',
};

export function errorClassLabel(errorClass: string): string {
  return ERROR_CLASSES[errorClass] ?? errorClass.replaceAll('_', ' ');
}

export type HealthTone = 'success' | 'danger' | 'warning' | 'neutral';

/** The provider's state in one badge: off, no key, healthy, or unhealthy with why and since when. */
export function healthBadge(p: ProviderEntry): { label: string; tone: HealthTone; detail: string | null } {
  if (!p.enabled) return { label: 'Off', tone: 'neutral', detail: null };
  if (!p.configured) return { label: 'No key', tone: 'neutral', detail: null };
  if (p.health.status === 'ok') return { label: 'Healthy', tone: 'success', detail: null };
  if (p.health.status === 'unknown') return { label: 'Not checked yet', tone: 'neutral', detail: null };
  const why = p.health.lastError ? errorClassLabel(p.health.lastError) : null;
  const since = p.health.since ? `since ${formatDate(p.health.since)}` : null;
  return {
    label: ['Unhealthy', why && `: ${why}`].filter(Boolean).join(''),
    tone: 'danger',
    detail: [since, p.health.message].filter(Boolean).join(' · ') || null,
  };
}

export interface OfferLine {
  model: string;
  name: string;
  price: string | null;
}

/**
 * What a provider offers: each of its models by name, with its price there when the catalog has
 * it (a service may list offers only for configured providers, so a price can be missing).
 */
export function providerOffers(p: ProviderEntry, catalog: readonly ModelRecord[]): OfferLine[] {
  return p.models.map((id) => {
    const model = catalog.find((m) => m.id === id || `${m.base}/${m.slug}` === id);
    const offer = model?.providers?.find((o) => o.id === p.id || o.slug === p.slug);
    return {
      model: id,
      name: model?.name ?? id,
      price: model && offer ? offerPriceText(model, offer) : null,
    };
  });
}

/** `••••1234`: the only form of a key the renderer ever shows. */
export function maskedLast4(last4: string | null): string {
  return last4 ? `••••${last4}` : '••••';
}
