import { z } from 'zod';
import { RoutingMode } from './generations.ts';
import { MediaKind } from './media.ts';

/**
 * A provider routing chose for a plan, by id: the catalog gives its adapter and offer when the
 * plan runs (docs/architecture.md, "A generation's trip").
 */
export const PlannedCandidate = z.object({
  provider: z.string().min(1),
  /** Request parameters this provider cannot honour and will not receive. */
  ignoredParameters: z.array(z.string()),
});
export type PlannedCandidate = z.infer<typeof PlannedCandidate>;

/**
 * One generation as the service runs it: the request validated, then routed. The service makes it
 * once, when the request comes in, stores it as it is (in the generation's row and in each
 * provider job's row) and runs, resumes and takes over a generation from it, never from the raw
 * body again. Plain data: it names the model and the providers by id, so it reads back from JSON
 * unchanged.
 */
export const GenerationPlan = z.object({
  kind: MediaKind,
  /** The model's id (`base/model`) and the version the request resolved to. */
  model: z.string().min(1),
  version: z.string(),
  prompt: z.string(),
  size: z.string(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** Seconds of video (0 for images). */
  duration: z.number().nonnegative(),
  count: z.number().int().positive(),
  style: z.string().optional(),
  imageUrl: z.string().optional(),
  seed: z.number().int().nonnegative(),
  public: z.boolean(),
  routing: RoutingMode,
  /** The model's own parameters from the request, validated against the model, by v1 name. */
  parameters: z.record(z.string(), z.unknown()),
  /** The request asks for a soundtrack (feature `audio`). */
  audio: z.literal(true).optional(),
  /**
   * Sound as it is priced: the request's `audio`, else the model's default; absent when neither
   * says (priced with sound, so the figure never understates).
   */
  pricedAudio: z.boolean().optional(),
  /** Variations: the source item's id, recorded on each new item. */
  variationOf: z.string().optional(),
  /** Variations: the source item whose first frame is the start image. */
  startFrameOf: z.string().optional(),
  /** The providers to try, first to try first. */
  candidates: z.array(PlannedCandidate),
  /**
   * The providers ahead of each candidate had none been cooling down (routing order): those passed
   * over for their cooldown count in stats.retries.
   */
  ranking: z.array(PlannedCandidate),
});
export type GenerationPlan = z.infer<typeof GenerationPlan>;
