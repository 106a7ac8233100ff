import { z } from 'zod';

/**
 * Model and provider records (docs/api.md; the spec leaves their fields open).
 * Parameter rules drive both the service's validation and the renderer's form.
 */
export const DurationRule = z.looseObject({
  min: z.number(),
  max: z.number(),
  default: z.number(),
  /** The only durations any provider of the model renders, when they are fixed (seconds). */
  values: z.array(z.number()).optional(),
});
export const ValuesRule = z.looseObject({ values: z.array(z.string()), default: z.string().optional() });
export const SupportedRule = z.looseObject({ supported: z.boolean() });
/** Image models accept any `WxH` within these bounds, not only the listed values. */
export const SizeRule = ValuesRule.extend({
  minWidth: z.number().int().optional(),
  minHeight: z.number().int().optional(),
  maxWidth: z.number().int().optional(),
  maxHeight: z.number().int().optional(),
});

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean'] as const;

/**
 * A model's own parameter ("Models may accept further parameters of their own"): the request's
 * field of that name is checked against this rule and handed on to the providers that honour it.
 * Every field is optional so that records from other services still parse.
 */
export const ParameterRule = z.looseObject({
  type: z.enum(PARAMETER_TYPES).optional(),
  /** Inclusive bounds of a number or integer. */
  min: z.number().optional(),
  max: z.number().optional(),
  /** Longest string, in characters. */
  maxLength: z.number().int().positive().optional(),
  /** The only values allowed. */
  values: z.array(z.union([z.string(), z.number()])).optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  description: z.string().optional(),
});
export type ParameterRule = z.infer<typeof ParameterRule>;

/** Parameters that are fields of the interface itself, with rules of their own shape (not ParameterRule). */
export const INTERFACE_PARAMETERS = ['duration', 'size', 'image_url', 'style', 'n'] as const;

/**
 * A model's parameter rules. Other keys are the model's own parameters, each a ParameterRule; the
 * wire schema leaves them open so that records from other services still parse (the service's
 * catalog file is checked strictly, with ParameterRule).
 */
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

/**
 * Where a price comes from: the provider's public price page and the day it was read. `verified`
 * is false where the figure could not be checked against that page (`note` says why).
 */
export const PriceSource = z.looseObject({
  priceAsOf: z.string().optional(),
  priceSource: z.string().optional(),
  priceVerified: z.boolean().optional(),
  priceNote: z.string().optional(),
});

/** A provider's offer for one model. `price` is USD per second of video, or per image. */
export const ModelProviderOffer = PriceSource.extend({
  id: z.string(),
  slug: z.string(),
  name: z.string().optional(),
  price: z.number().nonnegative(),
  priceUnit: z.enum(['second', 'image']).optional(),
  features: z.array(z.string()),
  /** Sizes this provider renders for the model (a basic requirement of routing). */
  sizes: z.array(z.string()).optional(),
  /** The only durations (seconds) it renders, when fixed (a basic requirement of routing). */
  durations: z.array(z.number()).optional(),
  /** The model's own parameters this provider honours. */
  parameters: z.array(z.string()).optional(),
  /** `available`/`unavailable` (local providers) or `ok`/`unhealthy` (remote providers). */
  status: z.enum(['available', 'unavailable', 'ok', 'unhealthy']).or(z.string()).optional(),
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

/** One offer in a provider record: the model it is for, with its price and what it honours. */
export const ProviderOfferRecord = PriceSource.extend({
  model: z.string(),
  price: z.number().nonnegative(),
  priceUnit: z.enum(['second', 'image']),
  features: z.array(z.string()),
  sizes: z.array(z.string()),
  durations: z.array(z.number()).optional(),
  parameters: z.array(z.string()).optional(),
});
export type ProviderOfferRecord = z.infer<typeof ProviderOfferRecord>;

/**
 * A provider. Local (procedural) providers have `status` `available`/`unavailable`; remote AI
 * providers have `ok`/`unhealthy`, with the class of the last error and since when. `available`
 * says for both whether routing uses it now (a remote one must be configured, enabled and not
 * cooling down). A provider key is never part of it.
 */
export const ProviderRecord = z.looseObject({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(['available', 'unavailable', 'ok', 'unhealthy']).or(z.string()),
  models: z.array(z.string()),
  features: z.array(z.string()),
  description: z.string().optional(),
  kind: z.enum(['local', 'remote']).optional(),
  configured: z.boolean().optional(),
  enabled: z.boolean().optional(),
  available: z.boolean().optional(),
  lastError: z.looseObject({ class: z.string(), message: z.string().optional(), at: z.string() }).optional(),
  /** When it turned unhealthy (ISO 8601). */
  since: z.string().optional(),
  /** Routing skips it until then (ISO 8601). */
  cooldownUntil: z.string().optional(),
  offers: z.array(ProviderOfferRecord).optional(),
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
/** Single records come back as `{success, result: record}` (docs/api.md, "Envelope of single records"). */
export const ModelResponse = z.looseObject({ success: z.literal(true), result: ModelRecord });
export const ProviderResponse = z.looseObject({ success: z.literal(true), result: ProviderRecord });
