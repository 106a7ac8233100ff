import type { ProviderRecord, Usage } from '../../shared/api/index.ts';

/**
 * The text lines of `clipdesk usage` and `clipdesk providers` (docs/cli.md): pure, so what a
 * service's answer prints is tested without one.
 */

/** The usage fields the named lines below show; anything else a service sends is printed as it came. */
const SHOWN_USAGE_FIELDS = new Set([
  'tier',
  'limits.rate.minute',
  'limits.rate.hour',
  'limits.rate.day',
  'limits.concurrency.video',
  'limits.concurrency.image',
  'limits.storageBytes',
  'limits.retentionDays',
  'usage.requests.minute',
  'usage.requests.hour',
  'usage.requests.day',
  'usage.running.video',
  'usage.running.image',
  'usage.storageBytes',
  'usage.cost.total',
]);

/** Whether the answer has the parts Clipdesk's own service always sends (docs/api.md "Usage"). */
export function isPartialUsage(u: Usage): boolean {
  return u.tier === undefined || u.limits === undefined || u.usage === undefined;
}

/**
 * `clipdesk usage`'s lines: a named line for each figure the answer has (docs/api.md
 * "Extensions"). From a service whose answer is not Clipdesk's, every other field it sent
 * follows as a `key: value` line (nested keys joined with dots), so nothing it said is hidden.
 */
export function usageLines(u: Usage): string[] {
  const lines = knownUsageLines(u);
  if (!isPartialUsage(u)) return lines;
  for (const [key, value] of leaves(u, '')) if (!SHOWN_USAGE_FIELDS.has(key)) lines.push(`${key}: ${value}`);
  return lines;
}

function knownUsageLines(u: Usage): string[] {
  const lines: string[] = [];
  const r = u.usage?.requests;
  const l = u.limits?.rate;
  const of = (used: number | undefined, limit: number | undefined): string => `${used ?? '?'}/${limit ?? '?'}`;
  if (u.tier !== undefined) lines.push(`tier\t${u.tier}`);
  if (r || l)
    lines.push(
      `requests\t${of(r?.minute, l?.minute)} per minute, ${of(r?.hour, l?.hour)} per hour, ${of(r?.day, l?.day)} per day`,
    );
  const running = u.usage?.running;
  const concurrency = u.limits?.concurrency;
  if (running || concurrency)
    lines.push(
      `running\t${of(running?.video, concurrency?.video)} videos, ${of(running?.image, concurrency?.image)} images`,
    );
  const stored = u.usage?.storageBytes;
  const storageLimit = u.limits?.storageBytes;
  if (stored !== undefined || storageLimit !== undefined) {
    const kept = u.limits?.retentionDays === undefined ? '' : `, kept ${u.limits.retentionDays} days`;
    lines.push(
      `storage\t${stored === undefined ? '?' : (stored / 1e6).toFixed(1)} MB of ${storageLimit === undefined ? '?' : (storageLimit / 1e6).toFixed(0)} MB${kept}`,
    );
  }
  const total = u.usage?.cost?.total;
  if (total !== undefined) lines.push(`cost\t$${total.toFixed(4)}`);
  return lines;
}

/** Every scalar in a JSON value with its dotted path (`plan.name`, `credits.0`); an empty list or object as `[]`/`{}`. */
function leaves(value: unknown, path: string): Array<[string, string]> {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    if (entries.length === 0) return path ? [[path, Array.isArray(value) ? '[]' : '{}']] : [];
    return entries.flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  }
  return [[path, typeof value === 'string' ? value : JSON.stringify(value)]];
}

/**
 * A provider's state in `clipdesk providers`: whether routing can use it and, if not, why. A
 * remote provider without a key reports `status: ok` (no error seen yet) but is not usable.
 */
export function providerState(p: ProviderRecord, now: Date): string {
  if (p.configured === false) return 'no key';
  if (p.enabled === false) return 'disabled';
  const cooling =
    p.cooldownUntil !== undefined && Date.parse(p.cooldownUntil) > now.getTime()
      ? `cooling down until ${p.cooldownUntil}`
      : null;
  const status = p.status ?? (cooling ? null : '-');
  return [status, cooling].filter((s) => s !== null).join(', ');
}

/** `clipdesk providers`' lines: id, slug, state, name, models ("-" where the service tells nothing). */
export function providerLines(providers: readonly ProviderRecord[], now: Date): string[] {
  return providers.map((p) => `${p.id}\t${p.slug}\t${providerState(p, now)}\t${p.name}\t${p.models?.join(',') ?? '-'}`);
}
