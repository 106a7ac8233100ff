import type { PriceEntry, PriceUnit } from './model-records.ts';
import { parseImageSize } from './generations.ts';
import { VIDEO_SIZE_PIXELS } from './offer-sizes.ts';

/**
 * What one request costs on one offer (docs/providers.md, "Prices"). The routing preview, the
 * charge, routing's order by price and the app's estimate all call chargeFor, so the figure a
 * creator is shown is the figure charged.
 */

/** The offer's prices: the headline figure, and the table when the price depends on the request. */
export interface PricedOffer {
  /** USD per second of video, or per image (the headline routing shows). */
  price: number;
  prices?: readonly PriceEntry[] | undefined;
}

/** What of a request the price depends on. */
export interface ChargeRequest {
  media: string;
  /** As requested: `720p`, `1080p`, `1024x1024` … */
  size?: string | undefined;
  /** Pixels, when known (per-megapixel prices); else read from a `WxH` size or a video size label. */
  width?: number | undefined;
  height?: number | undefined;
  /** Seconds of video. */
  duration?: number | undefined;
  /** Items the request makes (`n` images; one video). */
  count?: number | undefined;
  /**
   * With (true) or without (false) a soundtrack. Absent: priced with one — the dearer line, so
   * the figure shown never understates (requestAudio resolves the model's default first).
   */
  audio?: boolean | undefined;
}

export interface Charge {
  /** USD for the whole request. */
  usd: number;
  /** USD for one item (a video, an image). */
  unitUsd: number;
  count: number;
  /** The table line it was priced by; null: the headline price (no table, or no line fits). */
  entry: PriceEntry | null;
}

/** USD for one request on this offer, and the line of its table that priced it. */
export function chargeFor(offer: PricedOffer, request: ChargeRequest): Charge {
  const count = request.count !== undefined && request.count > 0 ? request.count : 1;
  const entry = priceEntryFor(offer.prices, request);
  const unitUsd = entry
    ? entryUsd(entry, request)
    : // No table (or no line for this request): as before tables, the headline × seconds of video.
      offer.price * (request.media === 'video' ? (request.duration ?? 0) : 1);
  return { usd: unitUsd * count, unitUsd, count, entry };
}

/** The request's choice of sound: the value it gives, else the model's default, else unknown. */
export function requestAudio(value: unknown, rule?: { default?: unknown }): boolean | undefined {
  if (typeof value === 'boolean') return value;
  return typeof rule?.default === 'boolean' ? rule.default : undefined;
}

/**
 * The line of the table that prices the request: among the lines that fit it (its size, its
 * sound, and for a per-video line its duration), the most specific; the first of equals.
 */
export function priceEntryFor(prices: readonly PriceEntry[] | undefined, request: ChargeRequest): PriceEntry | null {
  let best: PriceEntry | null = null;
  let bestScore = -1;
  for (const entry of prices ?? []) {
    if (!fits(entry, request)) continue;
    const score =
      (entry.size !== undefined ? 1 : 0) +
      (entry.audio !== undefined ? 1 : 0) +
      (entry.unit === 'video' && entry.duration !== undefined ? 1 : 0);
    if (score > bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}

function fits(entry: PriceEntry, request: ChargeRequest): boolean {
  if (entry.size !== undefined && normal(entry.size) !== normal(request.size ?? '')) return false;
  if (entry.audio !== undefined && entry.audio !== (request.audio ?? true)) return false;
  // A per-video line lasts its fixed duration: never stretched or divided to another.
  if (entry.unit === 'video' && entry.duration !== undefined && entry.duration !== request.duration) return false;
  if (entry.unit === 'megapixel' && megapixels(request) === undefined) return false;
  return true;
}

function entryUsd(entry: PriceEntry, request: ChargeRequest): number {
  switch (entry.unit) {
    case 'second':
      return entry.usd * (request.duration ?? 0);
    case 'megapixel':
      return entry.usd * (megapixels(request) ?? 0);
    case 'video':
    case 'image':
      return entry.usd;
  }
}

/** The request's megapixels: its pixels, its `WxH` size, or a video size label's pixels. */
export function megapixels(request: Pick<ChargeRequest, 'size' | 'width' | 'height'>): number | undefined {
  if (request.width !== undefined && request.height !== undefined && request.width > 0 && request.height > 0)
    return (request.width * request.height) / 1e6;
  const size = normal(request.size ?? '');
  const [w, h] = parseImageSize(size);
  if (w > 0 && h > 0) return (w * h) / 1e6;
  const label = (VIDEO_SIZE_PIXELS as Record<string, { width: number; height: number }>)[size];
  return label ? (label.width * label.height) / 1e6 : undefined;
}

function normal(size: string): string {
  return size.trim().toLowerCase();
}

const UNIT_WORDS: Readonly<Record<PriceUnit, string>> = {
  second: '/s',
  video: ' per video',
  image: '/image',
  megapixel: '/MP',
};

/**
 * One line of a table in words, for a price list or the preview's explanation: "1080p with sound
 * $0.40/s", "$1.40 per 5 s video", "1024x1024 $0.042/image". `usd` formats the figure.
 */
export function describePriceEntry(entry: PriceEntry, usd: (value: number) => string): string {
  const when = [entry.size, entry.audio === undefined ? undefined : entry.audio ? 'with sound' : 'silent']
    .filter((w): w is string => w !== undefined)
    .join(' ');
  const per =
    entry.unit === 'video' && entry.duration !== undefined ? ` per ${entry.duration} s video` : UNIT_WORDS[entry.unit];
  return `${when ? `${when} ` : ''}${usd(entry.usd)}${per}`;
}
