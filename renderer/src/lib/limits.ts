/**
 * The few constants of shared/api the renderer shows. They live in modules that build zod schemas
 * at load time, and importing them would put all of zod on the app's startup path for a dozen
 * numbers and strings. A unit test (test/unit/renderer/limits.test.ts) keeps these equal to the
 * shared ones, so shared/api stays the one source.
 */
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

export const ROUTING_MODES = ['optimal', 'cheapest', 'compatible'] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

export const ROUTING_EXPLANATIONS: Readonly<Record<RoutingMode, string>> = {
  optimal: 'Cheapest provider that supports everything you asked for; may pay up to 20% more for more features.',
  cheapest: 'Lowest price that can make this model at this size and length; extras it cannot do are dropped.',
  compatible: 'Must honour every parameter you set, even if it costs more; fails if no provider can.',
};
