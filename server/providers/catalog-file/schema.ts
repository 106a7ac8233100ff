import { z } from 'zod';
import {
  END_IMAGE_PARAMETER,
  FEATURES,
  ModelParameters,
  ParameterRule,
  parseModelId,
  PriceEntry,
} from '../../../shared/api/index.ts';
import { OfferInputs } from '../remote/inputs.ts';
import { REMOTE_PROVIDER_IDS } from '../remote/contract.ts';

/**
 * The catalog file of AI models (built in: models.json beside this file; the operator's:
 * `DATA/catalog.json`). Model ids are `<base>/<model>`: the maker (`kling`, `google`, `bfl` …) and
 * the model as the maker names it, lower case; a request may add `:<version>`.
 */

const TASKS = ['text_to_video', 'image_to_video', 'text_to_image'] as const;

const ModelId = z.string().refine((id) => {
  const parsed = parseModelId(id);
  return parsed.ok && parsed.id.version === null && id === id.trim().toLowerCase();
}, 'must be a lower-case model id <base>/<model> without a version');

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');

export const OfferPath = z.union([
  z.string().min(1),
  z.strictObject(
    Object.fromEntries(TASKS.map((t) => [t, z.string().min(1).optional()])) as Record<
      (typeof TASKS)[number],
      z.ZodOptional<z.ZodString>
    >,
  ),
]);

/**
 * A price line as a catalog file states it: the wire's PriceEntry, plus the fields each unit needs
 * (docs/providers.md, "Prices"), so a line that cannot be charged stops the service at start.
 */
export const CatalogPriceLine = PriceEntry.superRefine((line, ctx) => {
  const need = (ok: boolean, message: string) => {
    if (!ok) ctx.addIssue({ code: 'custom', message });
  };
  need(
    line.unit !== 'block' || line.blockSeconds !== undefined,
    'a block line needs blockSeconds (the seconds one block lasts)',
  );
  need(
    line.unit !== 'token' || line.token !== undefined,
    'a token line needs token (input_text, input_image, output_text or output_image)',
  );
  need(
    line.extraSecondUsd === undefined || (line.unit === 'video' && line.duration !== undefined),
    'extraSecondUsd belongs to a video line with duration (the seconds its base covers)',
  );
  need(line.blockSeconds === undefined || line.unit === 'block', 'blockSeconds belongs to a block line');
  need(line.rounding === undefined || line.unit === 'megapixel', 'rounding belongs to a megapixel line');
  need(line.token === undefined || line.unit === 'token', 'token belongs to a token line');
});

export const CatalogOffer = z.strictObject({
  provider: z.enum(REMOTE_PROVIDER_IDS),
  /** The provider's own model path, one for every task or one per task. */
  path: OfferPath,
  /** USD per second of video, or per image. */
  price: z.number().nonnegative(),
  prices: z.array(CatalogPriceLine).optional(),
  /** The day the price was read from `priceSource`. */
  priceAsOf: Day,
  priceSource: z.url(),
  /** Set where the figure could not be checked against the provider's own price page: why. */
  unverified: z.string().min(1).optional(),
  features: z.array(z.enum(FEATURES)).min(1),
  sizes: z.array(z.string().min(1)).min(1),
  /** The only durations (seconds) the provider renders, when it has fixed ones. */
  durations: z.array(z.number().positive()).min(1).optional(),
  /** The model's own parameters (by v1 name) this provider honours. */
  parameters: z.array(z.string().min(1)).optional(),
  /** Synced offers: the model's own input names for the interface's fields (remote/inputs.ts). */
  inputs: OfferInputs.optional(),
  /**
   * Synced offers: each model path's input schema as its provider's OpenAPI document gave it
   * (`{type, properties, required}`), checked before every submit (remote/input-schemas.ts).
   */
  inputSchemas: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  note: z.string().optional(),
});
export type CatalogOffer = z.infer<typeof CatalogOffer>;

/** The interface's own rules, and every other key a ParameterRule (the model's own parameters). */
export const CatalogParameters = ModelParameters.catchall(ParameterRule).superRefine((parameters, ctx) => {
  // The service resolves one image parameter, the end frame, into a file for the provider; any
  // other of type image would reach a provider as our URL, which it cannot fetch (docs/api.md).
  for (const [name, rule] of Object.entries(parameters))
    if ((rule as { type?: unknown } | undefined)?.type === 'image' && name !== END_IMAGE_PARAMETER)
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `only ${END_IMAGE_PARAMETER} (the end frame) can be of type image`,
      });
});

export const CatalogModel = z.strictObject({
  id: ModelId,
  name: z.string().min(1),
  description: z.string().min(1),
  media: z.enum(['video', 'image']),
  /** Oldest first; the last is the latest. Default ['1']: the release the providers serve today. */
  versions: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/))
    .min(1)
    .optional(),
  parameters: CatalogParameters,
  offers: z.array(CatalogOffer),
});
export type CatalogModel = z.infer<typeof CatalogModel>;

export const CatalogFile = z.strictObject({
  $comment: z.string().optional(),
  version: z.literal(1),
  models: z.array(CatalogModel),
});
export type CatalogFile = z.infer<typeof CatalogFile>;

/**
 * The operator's file: the same shape, where an entry for a model (or an offer) that already exists
 * changes only the fields it names — a price, say — and a new one must be complete.
 */
export const OfferPatch = CatalogOffer.partial().extend({ provider: z.enum(REMOTE_PROVIDER_IDS) });
export const ModelPatch = z.strictObject({
  id: ModelId,
  name: z.string().min(1).optional(),
  description: z.string().min(1).optional(),
  media: z.enum(['video', 'image']).optional(),
  versions: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/))
    .min(1)
    .optional(),
  /** Merged by parameter name over the existing ones. */
  parameters: z.record(z.string(), z.unknown()).optional(),
  /** Merged by provider over the existing offers. */
  offers: z.array(OfferPatch).optional(),
});
export const OperatorCatalogFile = z.strictObject({
  $comment: z.string().optional(),
  version: z.literal(1),
  models: z.array(ModelPatch),
});
