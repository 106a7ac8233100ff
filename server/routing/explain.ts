import type { RoutingMode } from '../../shared/api/index.ts';
import type { RouteCandidate } from './route.ts';
import { OPTIMAL_ALLOWANCE } from './route.ts';

/** What a dropped request parameter means to a creator. */
const PARAMETER_WORDS: Readonly<Record<string, string>> = {
  image_url: 'start frame',
  style: 'style',
  seed: 'seed',
  audio: 'sound',
};

/** A provider feature a creator would recognise, for "supports … too". */
const FEATURE_WORDS: Readonly<Record<string, string>> = {
  image_to_video: 'start frames',
  text_to_video: 'text-to-video',
  text_to_image: 'text-to-image',
  hd: 'HD',
  style: 'styles',
  seed: 'seeds',
  audio: 'sound',
};

function words(list: readonly string[], table: Readonly<Record<string, string>>): string {
  const named = list.map((p) => table[p] ?? p);
  return named.length <= 1 ? (named[0] ?? '') : `${named.slice(0, -1).join(', ')} and ${named.at(-1) ?? ''}`;
}

/**
 * Why a mode's first candidate is the one, in one line. `fullMatch` is compatible's first (the
 * cheapest provider that honours every parameter), or null when there is none.
 */
export function explainChoice(input: {
  mode: RoutingMode;
  pinned: boolean;
  first: RouteCandidate;
  fullMatch: RouteCandidate | null;
  /** Request fields that are not parameters of the model (no provider can honour them). */
  unknown: readonly string[];
  /** What the request costs on a candidate (default: its headline price). */
  cost?: (c: RouteCandidate) => number;
}): string {
  const { mode, first, fullMatch } = input;
  if (input.pinned) return `${first.provider.name} is named in the request: routing is bypassed`;
  const dropped = first.ignoredParameters;
  if (dropped.length > 0) {
    const known = dropped.filter((p) => !input.unknown.includes(p));
    const unknown = dropped.filter((p) => input.unknown.includes(p));
    const why = [
      known.length > 0
        ? mode === 'optimal'
          ? `no provider honours every parameter, and the cheapest takes no ${words(known, PARAMETER_WORDS)}`
          : `the cheapest provider takes no ${words(known, PARAMETER_WORDS)}`
        : '',
      unknown.length > 0 ? `${unknown.join(', ')}: not a parameter of this model` : '',
    ].filter(Boolean);
    return `drops ${dropped.join(', ')}: ${why.join('; ')}`;
  }
  if (mode === 'optimal' && fullMatch && fullMatch.provider.id !== first.provider.id) {
    const extra = first.offer.features.filter((f) => !fullMatch.offer.features.includes(f));
    const cost = input.cost ?? ((c: RouteCandidate) => c.offer.price);
    const more = Math.round((cost(first) / cost(fullMatch) - 1) * 100);
    return (
      `${first.provider.name}: supports ${words(extra, FEATURE_WORDS)} too, for ${more} % more than ` +
      `${fullMatch.provider.name} (optimal allows up to ${Math.round((OPTIMAL_ALLOWANCE - 1) * 100)} %)`
    );
  }
  return 'cheapest provider that honours every parameter';
}
