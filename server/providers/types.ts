import type { Feature, PriceEntry } from '../../shared/api/index.ts';
import type { ProviderAdapter, RemoteProviderId } from './remote/contract.ts';
import type { OfferInputs } from './remote/inputs.ts';

/**
 * The contract between the service (routing, pipeline, storage) and its providers.
 * Local providers are procedural renderers built on ffmpeg: honest labels, no AI.
 */
export interface RenderJob {
  kind: 'video' | 'image';
  /** Canonical model id `base/model:version` (version resolved). */
  model: string;
  prompt: string;
  /** Same inputs, same seed → same frames. */
  seed: number;
  width: number;
  height: number;
  /** Seconds; 0 for images. */
  durationSeconds: number;
  style?: string;
  /** A local, already validated image file to animate (image-to-video). */
  startImagePath?: string;
  /** Directory to write the master file into (same filesystem as storage; the caller cleans it up). */
  workDir: string;
  signal: AbortSignal;
}

export interface RenderOutput {
  /** The master file: an MP4 for video, a PNG for an image. */
  path: string;
  mime: string;
}

export interface ProviderOffer {
  /** `base/model` without version: the provider serves every version of it. */
  model: string;
  /** USD per second of video, or per image: the headline figure. */
  price: number;
  /** The price table, when the price depends on size, sound or duration (shared/api/pricing.ts reads it). */
  prices?: PriceEntry[];
  /** What this provider honours for this model. */
  features: Feature[];
  /** Sizes it can render for this model (labels like '720p' for video, `WxH` bounds for images). */
  sizes: string[];
  /**
   * Remote offers: the provider's own model path, one for every task or one per task where the
   * provider has separate endpoints (text-to-video and image-to-video).
   */
  path?: string | Partial<Record<'text_to_video' | 'image_to_video' | 'text_to_image', string>>;
  /** Remote offers: the only durations (seconds) the provider renders, when it has fixed ones. */
  durations?: number[];
  /** Model parameters (by v1 name, beyond the interface's own fields) this provider honours. */
  parameters?: string[];
  /** Synced offers: the model's own names for the interface's fields (remote/inputs.ts). */
  inputs?: OfferInputs;
  /** Synced offers: each model path's input schema from the provider's listing (remote/input-schemas.ts). */
  inputSchemas?: Record<string, Record<string, unknown>>;
  /** Where the price comes from: the provider's public price page and the day it was read. */
  priceAsOf?: string;
  priceSource?: string;
  /** Set when the price could not be checked against `priceSource`: why (the figure is the best known). */
  priceNote?: string;
}

export interface LocalProvider {
  kind?: 'local';
  id: string;
  slug: string;
  name: string;
  description: string;
  offers: ProviderOffer[];
  render(job: RenderJob): Promise<RenderOutput>;
}

/** An AI provider reached through its adapter (server/providers/remote). */
export interface RemoteProvider {
  kind: 'remote';
  id: RemoteProviderId;
  slug: string;
  name: string;
  description: string;
  offers: ProviderOffer[];
  adapter: ProviderAdapter;
}

export type Provider = LocalProvider | RemoteProvider;
