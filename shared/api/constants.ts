/**
 * The spec's constants that the renderer shows at startup. Kept free of zod (and of any import)
 * so the app's first screen does not load the schema library for a dozen numbers and strings;
 * the schema modules (tiers.ts, generations.ts) re-export them, so this stays the one source.
 */

/** The spec's content-size table. */
export const CONTENT_LIMITS = {
  uploadImageBytes: 20_000_000,
  uploadVideoBytes: 100_000_000,
  promptVideoChars: 500,
  promptImageChars: 1_000,
  imageMaxDimension: 4096,
  videoMaxHeight: 1080,
  videoMaxSeconds: 30,
} as const;

export const RATE_WINDOWS = ['minute', 'hour', 'day'] as const;
export type RateWindow = (typeof RATE_WINDOWS)[number];

export const ROUTING_MODES = ['optimal', 'cheapest', 'compatible'] as const;
export type RoutingModeName = (typeof ROUTING_MODES)[number];

/** One-line explanations, shown beside the routing choice in the UI. */
export const ROUTING_EXPLANATIONS: Readonly<Record<RoutingModeName, string>> = {
  optimal: 'Cheapest provider that supports everything you asked for; may pay up to 20% more for more features.',
  cheapest: 'Lowest price that can make this model at this size and length; extras it cannot do are dropped.',
  compatible: 'Must honour every parameter you set, even if it costs more; fails if no provider can.',
};

/** Parameters that are fields of the interface itself, with rules of their own shape (not ParameterRule). */
export const INTERFACE_PARAMETERS = ['duration', 'size', 'image_url', 'style', 'n'] as const;
