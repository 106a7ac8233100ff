import { z } from 'zod';
import { MediaKind } from './media.ts';
import { RoutingMode } from './generations.ts';
import { PriceEntry } from './model-records.ts';

/**
 * docs/workflows.md: `POST /routing/preview`. The body is the body of a generation (`POST
 * /videos/generations` or `/images/generations`; the model says which); nothing is rendered,
 * charged or counted except by the rate limit. Each row is what the submit would get under one
 * routing mode, computed by the same routing code the generation runs, so what the preview shows
 * is what the submit charges.
 */
export const PreviewProvider = z.object({ id: z.string(), slug: z.string(), name: z.string() });
export type PreviewProvider = z.infer<typeof PreviewProvider>;

export const RoutingPreviewRow = z.object({
  routing: RoutingMode,
  /** The provider this mode would try first; null when the mode cannot render the request. */
  provider: PreviewProvider.nullable(),
  /** USD for one item (a video's unit price × its seconds; an image's price). */
  unitPrice: z.number().nonnegative().nullable(),
  /** USD this request would charge (unitPrice × the items it makes). */
  price: z.number().nonnegative().nullable(),
  /**
   * The line of the provider's price table that priced it (docs/providers.md, "Prices"); null:
   * its headline price. Clipdesk's extension: another service may not send it.
   */
  priceEntry: PriceEntry.nullable().optional(),
  /** Request parameters this choice would not honour (`image_url`, `style`, `seed` …). */
  dropped: z.array(z.string()),
  /** Why, in one line. */
  reason: z.string(),
  /** When the mode cannot render the request: the error the submit would get. */
  error: z.object({ type: z.string(), message: z.string() }).nullable(),
});
export type RoutingPreviewRow = z.infer<typeof RoutingPreviewRow>;

export const RoutingPreview = z.object({
  /** `base/slug:version`. */
  model: z.string(),
  media: MediaKind,
  /** Items one submit of this body makes (`n` for images, 1 for a video). */
  count: z.number().int().positive(),
  /** The mode the body asks for (its row is the one the submit gets). */
  routing: RoutingMode,
  /** A provider named in the body: routing is bypassed, every row names it. */
  pinned: PreviewProvider.nullable(),
  /** One row per routing mode, in ROUTING_MODES order. */
  rows: z.array(RoutingPreviewRow),
});
export type RoutingPreview = z.infer<typeof RoutingPreview>;

export const RoutingPreviewResponse = z.object({ success: z.literal(true), result: RoutingPreview });
export type RoutingPreviewResponse = z.infer<typeof RoutingPreviewResponse>;
