import { z } from 'zod';

/**
 * Model and provider records (DESIGN.md; the spec leaves their fields open).
 * Parameter rules drive both the service's validation and the renderer's form.
 */
export const DurationRule = z.looseObject({ min: z.number(), max: z.number(), default: z.number() });
export const ValuesRule = z.looseObject({ values: z.array(z.string()), default: z.string().optional() });
export const SupportedRule = z.looseObject({ supported: z.boolean() });
/** Image models accept any `WxH` within these bounds, not only the listed values. */
export const SizeRule = ValuesRule.extend({
  minWidth: z.number().int().optional(),
  minHeight: z.number().int().optional(),
  maxWidth: z.number().int().optional(),
  maxHeight: z.number().int().optional(),
});

export const ModelParameters = z.looseObject({
  duration: DurationRule.optional(),
  size: SizeRule.optional(),
  image_url: SupportedRule.optional(),
  style: ValuesRule.optional(),
  aspect_ratio: ValuesRule.optional(),
  /** Images per request (image models). */
  n: DurationRule.optional(),
});
export type ModelParameters = z.infer<typeof ModelParameters>;

/** Capabilities a request can use; providers list the ones they honour. */
export const FEATURES = ['text_to_video', 'image_to_video', 'style', 'hd', 'seed', 'text_to_image', 'audio'] as const;
export type Feature = (typeof FEATURES)[number];

/** A provider's offer for one model. `price` is USD per second of video, or per image. */
export const ModelProviderOffer = z.looseObject({
  id: z.string(),
  slug: z.string(),
  name: z.string().optional(),
  price: z.number().nonnegative(),
  priceUnit: z.enum(['second', 'image']).optional(),
  features: z.array(z.string()),
  /** Sizes this provider renders for the model (a basic requirement of routing). */
  sizes: z.array(z.string()).optional(),
  status: z.enum(['available', 'unavailable']).or(z.string()).optional(),
});
export type ModelProviderOffer = z.infer<typeof ModelProviderOffer>;

export const ModelRecord = z.looseObject({
  id: z.string(),
  base: z.string(),
  slug: z.string(),
  name: z.string(),
  version: z.string(),
  versions: z.array(z.string()),
  media: z.string(),
  description: z.string(),
  parameters: ModelParameters,
  providers: z.array(ModelProviderOffer),
});
export type ModelRecord = z.infer<typeof ModelRecord>;

export const ProviderRecord = z.looseObject({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(['available', 'unavailable']).or(z.string()),
  models: z.array(z.string()),
  features: z.array(z.string()),
  description: z.string().optional(),
});
export type ProviderRecord = z.infer<typeof ProviderRecord>;

export const ModelListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), models: z.array(ModelRecord) }),
});
export const ProviderListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), providers: z.array(ProviderRecord) }),
});
/** Single records come back as `{success, result: record}` (DESIGN.md "Envelope of single records"). */
export const ModelResponse = z.looseObject({ success: z.literal(true), result: ModelRecord });
export const ProviderResponse = z.looseObject({ success: z.literal(true), result: ProviderRecord });
