import type { StateCreator } from 'zustand';
import type { ModelRecord } from '../../../../shared/api/model-records.ts';
import type { RoutingMode } from '../../../../shared/api/generations.ts';
import type { MediaKind } from '../../../../shared/api/media.ts';
import type { ParameterValue } from '../../../../shared/api/model-parameters.ts';
import type { ComposeParams, ComposeState, StartFrame } from './initialState.ts';
import type { RestoredDraft } from './restore.ts';

export interface ComposeActions {
  setMedia: (media: MediaKind) => void;
  setPrompt: (prompt: string) => void;
  /** Step through history: -1 older, +1 newer. */
  recallHistory: (step: -1 | 1) => void;
  selectModel: (model: ModelRecord | undefined) => void;
  /**
   * With no model chosen, chooses one of the composer's kind: the one last generated with, else
   * the first the picker lists, so Generate is one prompt away (a kind with one model needs no pick).
   */
  preselect: (models: readonly ModelRecord[]) => void;
  setVersion: (version: string | null) => void;
  setParam: <K extends keyof ComposeParams>(key: K, value: ComposeParams[K]) => void;
  /** "More settings": one of the model's own parameters; undefined unsets it. */
  setModelParam: (name: string, value: ParameterValue | undefined) => void;
  setProvider: (provider: string | null) => void;
  setRouting: (routing: RoutingMode) => void;
  setVariations: (n: number) => void;
  /** Library → "Make variations ×N": the source video, or null to make an ordinary generation again. */
  setVariationOf: (source: { mediaId: string; name: string; count: number } | null) => void;
  /** 1–4 variations of the source. */
  setVariationCount: (n: number) => void;
  /** Validates before anything is uploaded; a refused file never becomes the start frame. */
  setStartFrame: (frame: StartFrame | null) => void;
  setStartFrameDimensions: (width: number, height: number) => void;
  refuseStartFrame: (message: string) => void;
  /** The end frame's slot, checked as the start frame is. */
  setEndFrame: (frame: StartFrame | null) => void;
  setEndFrameDimensions: (width: number, height: number) => void;
  refuseEndFrame: (message: string) => void;
  /** Applies the settings of an earlier generation (Library → "Regenerate"). */
  applySettings: (settings: {
    media: MediaKind;
    prompt: string;
    modelId: string | null;
    params?: Partial<ComposeParams>;
    /** The model's own parameters the earlier generation carried. */
    modelParams?: Record<string, ParameterValue>;
    provider?: string | null;
  }) => void;
  /** Queue → Edit: the job's request exactly (restore.ts), with what could not be restored named. */
  restoreDraft: (draft: RestoredDraft) => void;
  generate: (model: ModelRecord | undefined, count?: number) => Promise<string[]>;
  /**
   * Asks the service's routing preview for the request as it is now, 250 ms after the last
   * change (debounced); an answer to an older request is ignored.
   */
  refreshPreview: (model: ModelRecord | undefined) => void;
  /** "Submit at…" for the next Generate (ISO), or null to submit at once. */
  setSubmitAt: (at: string | null) => void;
  reset: () => void;
}

export type ComposeStore = ComposeState & ComposeActions;

/**
 * One part of the store (docs/architecture.md, "Layout"): made with the whole store's `set` and
 * `get`, as zustand's slices pattern has it, and spread into `useCompose`.
 */
export type ComposeSlice<K extends keyof ComposeStore> = StateCreator<ComposeStore, [], [], Pick<ComposeStore, K>>;
