/** Display formatting shared by every screen. Pure, so each is unit tested. */

export function formatPrice(usd: number): string {
  if (!Number.isFinite(usd)) return '—';
  if (usd === 0) return 'Free';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(usd < 1 ? 3 : 2)}`;
}

export function formatUnitPrice(usd: number, unit: 'second' | 'image'): string {
  return `${formatPrice(usd)} / ${unit === 'second' ? 's' : 'image'}`;
}

/**
 * A whole number with the reader's digit grouping. Below 1,000 there is nothing to group, and
 * skipping toLocaleString there keeps ICU's number formatter (about 20 ms to set up in Chromium)
 * off the first paint: the prompt counter shows "0 / 500" on the first screen.
 */
export function formatInteger(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1000 ? String(n) : n.toLocaleString();
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** Decimal units (MB = 10^6 bytes), as the service's limits are written. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

/** `75` → `1:15`; `3725` → `1:02:05`. */
export function formatElapsed(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function formatDate(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
