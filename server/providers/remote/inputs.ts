import { z } from 'zod';

/**
 * How a synced model names the interface's own fields in its provider's input (docs/providers.md,
 * "Syncing the catalog"): the catalog offer's `inputs`, read from the model's input schema by the
 * sync. The adapters build such a model's body from it; hand-kept models keep their own builders.
 */
export const INPUT_FIELDS = ['prompt', 'duration', 'size', 'image_url', 'seed', 'n', 'audio', 'aspect_ratio'] as const;
export type InputField = (typeof INPUT_FIELDS)[number];

/**
 * How a value is written: as text (`"5"`), a number, seconds with a unit (`"5s"`), text in upper
 * case (`"768P"`), or (a size) an object `{width, height}`.
 */
export const INPUT_FORMATS = ['text', 'number', 'seconds', 'upper', 'size-object'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export const OfferInput = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'must be an input name (letters, digits, _)'),
  format: z.enum(INPUT_FORMATS).optional(),
  /** The only values the model takes (aspect ratios): another value is left to the model's default. */
  values: z.array(z.string()).optional(),
});
export type OfferInput = z.infer<typeof OfferInput>;

export const OfferInputs = z.strictObject(
  Object.fromEntries(INPUT_FIELDS.map((f) => [f, OfferInput.optional()])) as Record<
    InputField,
    z.ZodOptional<typeof OfferInput>
  >,
);
export type OfferInputs = z.infer<typeof OfferInputs>;
