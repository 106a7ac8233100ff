import type { PriceEntry, PriceUnit, TokenKind } from './model-records.ts';
import { parseImageSize, VIDEO_SIZE_PIXELS } from './offer-sizes.ts';

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
  /** From a start frame (image-to-video, variations) or not; absent: from text alone. */
  startFrame?: boolean | undefined;
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
  // A table's figures are nano-dollar exact (entryUsd); × n keeps them so. Without a table, the
  // old product exactly, so charges of old rows stay equal.
  const usd = entry ? Math.round(unitUsd * count * 1e9) / 1e9 : unitUsd * count;
  return { usd, unitUsd, count, entry };
}

/** The request's choice of sound: the value it gives, else the model's default, else unknown. */
export function requestAudio(value: unknown, rule?: { default?: unknown }): boolean | undefined {
  if (typeof value === 'boolean') return value;
  return typeof rule?.default === 'boolean' ? rule.default : undefined;
}

/**
 * The line of the table that prices the request: among the lines that fit it (its size, its
 * sound, and for a fixed-length video line its duration), the most specific; the first of equals.
 * Token lines never price a request ahead: they price the usage a provider reports (tokenCharge).
 */
export function priceEntryFor(prices: readonly PriceEntry[] | undefined, request: ChargeRequest): PriceEntry | null {
  let best: PriceEntry | null = null;
  let bestScore = -1;
  for (const entry of prices ?? []) {
    if (!fits(entry, request)) continue;
    const score =
      (entry.size !== undefined ? 1 : 0) +
      (entry.audio !== undefined ? 1 : 0) +
      (entry.startFrame !== undefined ? 1 : 0) +
      (fixedLength(entry) ? 1 : 0);
    if (score > bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}

/** A per-video line that lasts exactly its `duration` (no rate for further seconds). */
function fixedLength(entry: PriceEntry): boolean {
  return entry.unit === 'video' && entry.duration !== undefined && entry.extraSecondUsd === undefined;
}

function fits(entry: PriceEntry, request: ChargeRequest): boolean {
  if (entry.unit === 'token') return false;
  if (entry.size !== undefined && normal(entry.size) !== normal(request.size ?? '')) return false;
  if (entry.audio !== undefined && entry.audio !== (request.audio ?? true)) return false;
  if (entry.startFrame !== undefined && entry.startFrame !== (request.startFrame ?? false)) return false;
  // A per-video line lasts its fixed duration: never stretched or divided to another.
  if (fixedLength(entry) && entry.duration !== request.duration) return false;
  if (entry.unit === 'megapixel' && megapixels(request) === undefined) return false;
  return true;
}

/**
 * USD for one item by one line. Rounded to the nano-dollar, so that a published example comes
 * out exactly ($0.28 + 5 × $0.056 is $0.56, not $0.56000000000000005).
 */
function entryUsd(entry: PriceEntry, request: ChargeRequest): number {
  const seconds = request.duration ?? 0;
  let usd: number;
  switch (entry.unit) {
    case 'second':
      usd = entry.usd * seconds;
      break;
    case 'block':
      // A started block is charged whole (fal: a 9 s Ray 2 clip is two 5 s blocks).
      usd = entry.usd * Math.max(1, Math.ceil(seconds / (entry.blockSeconds ?? 1)));
      break;
    case 'video':
      usd = entry.usd + (entry.extraSecondUsd ?? 0) * Math.max(0, seconds - (entry.duration ?? seconds));
      break;
    case 'megapixel':
      usd = entry.usd * billedMegapixels(entry, request);
      break;
    case 'image':
      usd = entry.usd;
      break;
    case 'token':
      usd = 0;
      break;
  }
  return Math.round(usd * sizeMultiplier(entry, request.size) * 1e9) / 1e9;
}

/** The line's factor at the request's size; × 1 at a size it does not name. */
function sizeMultiplier(entry: PriceEntry, size: string | undefined): number {
  const table = entry.sizeMultipliers;
  if (!table || size === undefined) return 1;
  const wanted = normal(size);
  const found = Object.entries(table).find(([key]) => normal(key) === wanted);
  return found ? found[1] : 1;
}

/** The megapixels a line bills: exact, or whole and rounded up where the provider rounds (fal). */
export function billedMegapixels(
  entry: Pick<PriceEntry, 'rounding'>,
  request: Pick<ChargeRequest, 'size' | 'width' | 'height'>,
): number {
  const exact = megapixels(request) ?? 0;
  if (entry.rounding !== 'up') return exact;
  // fal's whole megapixel is 1024 × 1024 pixels: its per-megapixel price is the price of a
  // 1024×1024 image (docs/providers.md, "Prices"). A power of two divides integers exactly.
  return Math.ceil(Math.round(exact * 1e6) / WHOLE_MEGAPIXEL_PIXELS);
}

/** The pixels of one whole megapixel where a provider bills whole megapixels (fal). */
export const WHOLE_MEGAPIXEL_PIXELS = 1024 * 1024;

/** Tokens by kind, as a provider's usage reports them. */
export type TokenUsage = Partial<Record<TokenKind, number>>;

/**
 * USD for the tokens a provider reports, by the offer's token lines (docs/providers.md, "Prices"):
 * each kind at its own line; a kind without one at the dearest line of its direction (input or
 * output), so a kind the provider's page does not price is never charged below what it lists.
 * Undefined when the table has no token lines (the catalog price then applies).
 */
export function tokenCharge(prices: readonly PriceEntry[] | undefined, usage: TokenUsage): number | undefined {
  const lines = (prices ?? []).filter((p) => p.unit === 'token' && p.token !== undefined);
  if (lines.length === 0) return undefined;
  let usd = 0;
  for (const [kind, count] of Object.entries(usage) as Array<[TokenKind, number | undefined]>) {
    if (!count || count <= 0) continue;
    const own = lines.find((l) => l.token === kind);
    const direction = kind.split('_')[0];
    const rate =
      own?.usd ?? Math.max(0, ...lines.filter((l) => l.token?.startsWith(`${direction}_`)).map((l) => l.usd));
    usd += count * rate;
  }
  return Math.round(usd * 1e6) / 1e6;
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
  block: ' per block',
  video: ' per video',
  image: '/image',
  megapixel: '/MP',
  token: '/token',
};

/**
 * One line of a table in words, for a price list or the preview's explanation: "1080p with sound
 * $0.40/s", "$1.40 per 5 s video", "$0.28 per 5 s video + $0.056/s after", "$0.50 per 5 s (720p ×2)",
 * "1024x1024 $0.042/image", "$0.025/MP (whole MP, rounded up)", "$40.00 per 1M output_image tokens".
 * `usd` formats the figure.
 */
export function describePriceEntry(entry: PriceEntry, usd: (value: number) => string): string {
  const when = [
    entry.startFrame === undefined ? undefined : entry.startFrame ? 'from a frame' : 'from text',
    entry.size,
    entry.audio === undefined ? undefined : entry.audio ? 'with sound' : 'silent',
  ]
    .filter((w): w is string => w !== undefined)
    .join(' ');
  return `${when ? `${when} ` : ''}${figure(entry, usd)}${multipliers(entry)}`;
}

function figure(entry: PriceEntry, usd: (value: number) => string): string {
  if (entry.unit === 'video' && entry.duration !== undefined) {
    const base = `${usd(entry.usd)} per ${entry.duration} s video`;
    return entry.extraSecondUsd === undefined ? base : `${base} + ${usd(entry.extraSecondUsd)}/s after`;
  }
  if (entry.unit === 'block' && entry.blockSeconds !== undefined)
    return `${usd(entry.usd)} per ${entry.blockSeconds} s`;
  if (entry.unit === 'megapixel' && entry.rounding === 'up') return `${usd(entry.usd)}/MP (whole MP, rounded up)`;
  if (entry.unit === 'token' && entry.token !== undefined)
    return `${usd(entry.usd * 1e6)} per 1M ${entry.token} tokens`;
  return `${usd(entry.usd)}${UNIT_WORDS[entry.unit]}`;
}

function multipliers(entry: PriceEntry): string {
  const table = Object.entries(entry.sizeMultipliers ?? {}).filter(([, factor]) => factor !== 1);
  return table.length === 0 ? '' : ` (${table.map(([size, factor]) => `${size} ×${factor}`).join(', ')})`;
}
