import type { RoutingMode } from '../../../../shared/api/generations.ts';
import type { MediaKind } from '../../../../shared/api/media.ts';
import type { RoutingPreview } from '../../../../shared/api/routing.ts';
import type { ParameterValue } from '../../../../shared/api/model-parameters.ts';
import type { StartFrame as WireStartFrame } from '../../../../shared/ipc/schemas/jobs.ts';

/** Where the start frame came from. A file is uploaded at submit time; library items are referenced. */
export type StartFrame =
  | {
      source: 'file';
      file: File;
      name: string;
      bytes: number;
      mime: string;
      previewUrl: string;
      width?: number;
      height?: number;
    }
  | {
      source: 'library';
      mediaId: string;
      name: string;
      previewUrl: string;
      /** Set for "use last frame": the PNG main extracted. */
      lastFramePath?: string;
      /**
       * docs/workflows.md, "Continue this shot": the shot this frame ends. The job records it as its parent
       * and its result joins that shot's chain; replacing or removing the frame drops it.
       */
      continues?: string;
      width?: number;
      height?: number;
    }
  | {
      /** Queue → Edit: the frame as the job sent it (restore.ts), sent again as it is. */
      source: 'job';
      frame: WireStartFrame;
      name: string;
      /** The picture's URL where the job names one; empty for a local file main holds. */
      previewUrl: string;
      width?: number;
      height?: number;
    };

export interface ComposeParams {
  duration?: number;
  size?: string;
  style?: string;
  aspect_ratio?: string;
  public: boolean;
  seed?: number;
}

export interface ComposeState {
  media: MediaKind;
  prompt: string;
  /** Newest first. */
  history: string[];
  /** -1 when not browsing history. */
  historyIndex: number;
  modelId: string | null;
  /** null = latest version. */
  version: string | null;
  params: ComposeParams;
  /**
   * The model's own parameters the creator set under "More settings", by the model's names; an
   * unset one is absent (the provider's default applies). A number field with text that is not a
   * number holds NaN, so the check says so rather than dropping it.
   */
  modelParams: Record<string, ParameterValue>;
  /** null = Automatic (routing decides). */
  provider: string | null;
  routing: RoutingMode;
  startFrame: StartFrame | null;
  startFrameError: string | null;
  /**
   * The end frame (docs/workflows.md, "The prompt dock"), given as a start frame is; sent only to a
   * model with an image parameter (`end_image_url`), and only with a start frame.
   */
  endFrame: StartFrame | null;
  endFrameError: string | null;
  variations: number;
  /**
   * docs/workflows.md: Compose makes variations of this library video through `POST /videos/variations`
   * (one generation, `count` new videos), prefilled from it. null = an ordinary generation.
   */
  variationOf: { mediaId: string; name: string; count: number } | null;
  submitting: boolean;
  submitError: string | null;
  /**
   * docs/workflows.md: the service's routing preview of this request (every mode's provider, price,
   * drops and why). `status` is `loading` while a newer request is being previewed; `data` keeps
   * the last answer meanwhile.
   */
  preview: {
    status: 'idle' | 'loading' | 'ready' | 'error';
    data: RoutingPreview | null;
    error: string | null;
    /** What `data` was computed for (the request without its routing mode, which every row covers). */
    key: string | null;
  };
  /** docs/workflows.md, "Submit at…": ISO time the next submission waits for; null = now. */
  submitAt: string | null;
  /** The model last generated with, per kind: Compose opens on it (`preselect`). */
  lastModel: Partial<Record<MediaKind, string>>;
  /**
   * Queue → Edit of a job whose model is offered no more: its wire id. Compose then preselects no
   * other model in its place (the price and the output would change unseen); picking one clears it.
   */
  missingModel: string | null;
  /** Queue → Edit: what of the job could not be restored (model, version, provider); null when all was. */
  restoreNotice: string | null;
}

export const HISTORY_LIMIT = 50;
export const MAX_VARIATIONS = 8;

export const initialState: ComposeState = {
  media: 'video',
  prompt: '',
  history: [],
  historyIndex: -1,
  modelId: null,
  version: null,
  // Private unless the creator ticks Public: the spec's default (true) would publish a creator's
  // drafts to the public feed without them asking. The request always says which.
  params: { public: false },
  modelParams: {},
  provider: null,
  routing: 'optimal',
  startFrame: null,
  startFrameError: null,
  endFrame: null,
  endFrameError: null,
  variations: 3,
  variationOf: null,
  submitAt: null,
  lastModel: {},
  missingModel: null,
  restoreNotice: null,
  submitting: false,
  submitError: null,
  preview: { status: 'idle', data: null, error: null, key: null },
};
