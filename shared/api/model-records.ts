import { z } from 'zod';
import { optionalShape, withExtensions } from './extensions.ts';
import type { ExtensionNote } from './extensions.ts';

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

/**
 * `image`: a picture the request gives by URL, resolved by the service as it resolves `image_url`
 * (its own upload URLs, or a public address) and handed to the provider as a file, never as the
 * URL (docs/api.md, "Model parameters"). `end_image_url` is the end frame of a video.
 */
export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'image'] as const;

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

export { INTERFACE_PARAMETERS } from './constants.ts';

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

/**
 * One line of an offer's price table (docs/providers.md, "Prices"): USD per unit, where a line may
 * apply only at one size, only with or without audio, or (per video) only to one fixed duration.
 * The units say what providers charge by:
 * - `second`: × the seconds of video;
 * - `block`: per block of `blockSeconds` seconds, a started block charged whole (fal's "per 5 seconds");
 * - `video`: per video; with `duration` alone, only a video of that length; with `extraSecondUsd`
 *   too, a base for the first `duration` seconds plus a rate per further second;
 * - `image`: per image;
 * - `megapixel`: × the image's megapixels, `rounding: 'up'` to whole megapixels as fal bills;
 * - `token`: per token of one `token` kind, priced from the usage a provider reports (OpenAI).
 * `sizeMultipliers` scales a line by the request's size (fal's Ray 2: 720p ×2, 1080p ×4). An
 * offer's `price` stays the headline figure (per second of video, or per image) that routing
 * sorts by; the table, when present, is what the preview and the charge read.
 */
export const PRICE_UNITS = ['second', 'block', 'video', 'image', 'megapixel', 'token'] as const;
export type PriceUnit = (typeof PRICE_UNITS)[number];
/** The kinds of tokens a provider's usage counts (OpenAI's `input_tokens_details`, `output_tokens_details`). */
export const TOKEN_KINDS = ['input_text', 'input_image', 'output_text', 'output_image'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];
export const PriceEntry = z.looseObject({
  unit: z.enum(PRICE_UNITS),
  usd: z.number().nonnegative(),
  /** Only at this size (`720p`, `1080p`, `1024x1024` …); absent: any size. */
  size: z.string().optional(),
  /** Only with (true) or without (false) a generated soundtrack; absent: either. */
  audio: z.boolean().optional(),
  /**
   * Only from a start frame (true: image-to-video) or from text alone (false); absent: either. A
   * provider may serve the two tasks at different tiers and prices (fal's Kling 2.1 makes
   * text-to-video only with its Master endpoint).
   */
  startFrame: z.boolean().optional(),
  /** Unit `video` only: the fixed seconds one video of this price lasts (with `extraSecondUsd`: the base's seconds). */
  duration: z.number().positive().optional(),
  /** Unit `video` only: USD for each second past `duration` (a base plus a rate per extra second). */
  extraSecondUsd: z.number().nonnegative().optional(),
  /** Unit `block` only: the seconds one block lasts; a started block is charged whole. */
  blockSeconds: z.number().positive().optional(),
  /** The line × this factor at a size (`{"720p": 2, "1080p": 4}`); a size it does not name: × 1. */
  sizeMultipliers: z.record(z.string(), z.number().positive()).optional(),
  /** Unit `megapixel` only: `up` bills whole megapixels, rounded up per image (fal). */
  rounding: z.enum(['up']).optional(),
  /** Unit `token` only: which tokens the line prices. */
  token: z.enum(TOKEN_KINDS).optional(),
});
export type PriceEntry = z.infer<typeof PriceEntry>;

/** A provider's offer for one model. `price` is USD per second of video, or per image. */
export const ModelProviderOffer = PriceSource.extend({
  id: z.string(),
  slug: z.string(),
  name: z.string().optional(),
  price: z.number().nonnegative(),
  priceUnit: z.enum(['second', 'image']).optional(),
  /** The price table, when the price depends on size, audio or duration. */
  prices: z.array(PriceEntry).optional(),
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

/** Clipdesk's extensions of a model record (docs/api.md): the Local engine sends all of them. */
export const MODEL_EXTENSIONS = {
  version: z.string(),
  versions: z.array(z.string()),
  description: z.string(),
  parameters: ModelParameters,
  providers: z.array(ModelProviderOffer),
};

/**
 * The spec's layer of a model record. The spec shows no field of it but the identifier
 * (`<base>/<model>[:<version>]`); base, slug, name and media are read when sent as strings and
 * otherwise derived from the id (readModelRecord).
 */
export const SpecModelRecord = z.looseObject({ id: z.string().min(1) });
export type SpecModelRecord = z.infer<typeof SpecModelRecord>;

const modelCore = { id: z.string(), base: z.string(), slug: z.string(), name: z.string(), media: z.string() };

/** A model record as Clipdesk's own service sends it: every extension present (OpenAPI, the Local engine). */
export const ClipdeskModelRecord = z.looseObject({ ...modelCore, ...MODEL_EXTENSIONS });
export type ClipdeskModelRecord = z.infer<typeof ClipdeskModelRecord>;

/** A model as the client holds it, from any v1 service: the spec's fields, and the extensions that came intact. */
export const ModelRecord = z.looseObject({ ...modelCore, ...optionalShape(MODEL_EXTENSIONS) });
export type ModelRecord = z.infer<typeof ModelRecord>;

/** A field another service may send: used when it is a non-empty string. */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** `acme/motion:2` → base `acme`, slug `motion`; ids of another form keep the whole id as slug. */
function idParts(id: string): { base: string; slug: string } {
  const slash = id.indexOf('/');
  if (slash < 0) return { base: '', slug: id.split(':')[0] ?? id };
  return { base: id.slice(0, slash), slug: (id.slice(slash + 1).split(':')[0] ?? '') || id };
}

/** The client's model from a record that passed the spec's layer. A missing media is 'video', the spec's main kind. */
export function readModelRecord(record: SpecModelRecord, where: string, note: ExtensionNote): ModelRecord {
  const parts = idParts(record.id);
  return {
    ...withExtensions(record, MODEL_EXTENSIONS, where, note),
    id: record.id,
    base: text(record['base']) ?? parts.base,
    slug: text(record['slug']) ?? parts.slug,
    name: text(record['name']) ?? record.id,
    media: text(record['media']) ?? 'video',
  };
}

/** One offer in a provider record: the model it is for, with its price and what it honours. */
export const ProviderOfferRecord = PriceSource.extend({
  model: z.string(),
  price: z.number().nonnegative(),
  priceUnit: z.enum(['second', 'image']),
  prices: z.array(PriceEntry).optional(),
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
export const PROVIDER_EXTENSIONS = {
  status: z.enum(['available', 'unavailable', 'ok', 'unhealthy']).or(z.string()),
  models: z.array(z.string()),
  features: z.array(z.string()),
  description: z.string(),
  kind: z.enum(['local', 'remote']),
  configured: z.boolean(),
  enabled: z.boolean(),
  available: z.boolean(),
  lastError: z.looseObject({ class: z.string(), message: z.string().optional(), at: z.string() }),
  /** When it turned unhealthy (ISO 8601). */
  since: z.string(),
  /** Routing skips it until then (ISO 8601). */
  cooldownUntil: z.string(),
  offers: z.array(ProviderOfferRecord),
};

/** The spec's layer of a provider record: "provider ID or slug" are what requests name it by. */
export const SpecProviderRecord = z.looseObject({ id: z.string().min(1) });
export type SpecProviderRecord = z.infer<typeof SpecProviderRecord>;

const providerCore = { id: z.string(), slug: z.string(), name: z.string() };
const { status, models, features, ...optionalProviderFields } = PROVIDER_EXTENSIONS;

/** A provider record as Clipdesk's service sends it (status, models and features always). */
export const ClipdeskProviderRecord = z.looseObject({
  ...providerCore,
  status,
  models,
  features,
  ...optionalShape(optionalProviderFields),
});
export type ClipdeskProviderRecord = z.infer<typeof ClipdeskProviderRecord>;

/** A provider as the client holds it, from any v1 service. */
export const ProviderRecord = z.looseObject({ ...providerCore, ...optionalShape(PROVIDER_EXTENSIONS) });
export type ProviderRecord = z.infer<typeof ProviderRecord>;

export function readProviderRecord(record: SpecProviderRecord, where: string, note: ExtensionNote): ProviderRecord {
  const slug = text(record['slug']) ?? record.id;
  return {
    ...withExtensions(record, PROVIDER_EXTENSIONS, where, note),
    id: record.id,
    slug,
    name: text(record['name']) ?? slug,
  };
}

/** Clipdesk's list and single-record answers (OpenAPI); the client reads any service's through the Spec* records. */
export const ModelListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), models: z.array(ClipdeskModelRecord) }),
});
export const ProviderListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), providers: z.array(ClipdeskProviderRecord) }),
});
/** Single records come back as `{success, result: record}` (docs/api.md, "Envelope of single records"). */
export const ModelResponse = z.looseObject({ success: z.literal(true), result: ClipdeskModelRecord });
export const ProviderResponse = z.looseObject({ success: z.literal(true), result: ClipdeskProviderRecord });
