import { create } from 'zustand';
import type { ModelRecord } from '../../../../shared/api/catalog.ts';
import type { RoutingMode } from '../../../../shared/api/generations.ts';
import type { MediaKind } from '../../../../shared/api/media.ts';
import { errorMessage } from '../../lib/ipc.ts';
import { loadPref, savePref } from '../../lib/prefs.ts';
import { previewRouting, submitGeneration } from './api.ts';
import {
  HISTORY_LIMIT,
  initialState,
  MAX_VARIATIONS,
  type ComposeParams,
  type ComposeState,
  type StartFrame,
} from './initialState.ts';
import type { ParameterValue } from '../../../../shared/api/model-parameters.ts';
import { keptModelParams } from './modelParams.ts';
import { buildRequest, checkStartFrame, defaultParams, generateBlocker } from './selectors.ts';

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

/** Debounce of the routing preview: a burst of edits costs one call. */
export const PREVIEW_DEBOUNCE_MS = 250;
let previewTimer: ReturnType<typeof setTimeout> | null = null;
let previewSeq = 0;

export type ComposeStore = ComposeState & ComposeActions;

const HISTORY_KEY = 'compose.history';
const LAST_MODEL_KEY = 'compose.lastModel';

export const useCompose = create<ComposeStore>()((set, get) => ({
  ...initialState,
  history: loadPref<string[]>(HISTORY_KEY, []),
  lastModel: loadPref<ComposeState['lastModel']>(LAST_MODEL_KEY, {}),
  setMedia(media) {
    if (media === get().media) return;
    set({
      media,
      modelId: null,
      version: null,
      params: { public: get().params.public },
      modelParams: {},
      provider: null,
      submitError: null,
    });
  },
  setPrompt(prompt) {
    set({ prompt, historyIndex: -1, submitError: null });
  },
  recallHistory(step) {
    const { history, historyIndex } = get();
    if (history.length === 0) return;
    const next = Math.min(history.length - 1, Math.max(-1, historyIndex - step));
    set({ historyIndex: next, prompt: next === -1 ? '' : (history[next] ?? '') });
  },
  selectModel(model) {
    if (!model) {
      set({ modelId: null, version: null, provider: null });
      return;
    }
    const { provider } = get();
    const keepProvider =
      provider !== null && (model.providers?.some((o) => o.id === provider || o.slug === provider) ?? true);
    set({
      modelId: model.id,
      media: model.media === 'image' ? 'image' : 'video',
      version: null,
      params: defaultParams(model, get().params),
      // What the creator set stays where the new model has the same parameter; the rest goes.
      modelParams: keptModelParams(get().modelParams, model),
      provider: keepProvider ? provider : null,
      submitError: null,
    });
  },
  preselect(models) {
    const { modelId, media, lastModel } = get();
    if (modelId !== null) return;
    const ofKind = models.filter((m) => m.media === media);
    const pick = ofKind.find((m) => m.id === lastModel[media]) ?? ofKind[0];
    if (pick) get().selectModel(pick);
  },
  setVersion(version) {
    set({ version });
  },
  setParam(key, value) {
    set((s) => ({ params: { ...s.params, [key]: value } }));
  },
  setModelParam(name, value) {
    set((s) => {
      const next = { ...s.modelParams };
      if (value === undefined) delete next[name];
      else next[name] = value;
      return { modelParams: next, submitError: null };
    });
  },
  setProvider(provider) {
    set({ provider });
  },
  setRouting(routing) {
    set({ routing });
  },
  setVariationOf(source) {
    set({ variationOf: source ? { ...source, count: clampVariations(source.count) } : null, submitError: null });
  },
  setVariationCount(n) {
    const current = get().variationOf;
    if (current) set({ variationOf: { ...current, count: clampVariations(n) } });
  },
  setVariations(n) {
    set({ variations: Math.min(MAX_VARIATIONS, Math.max(2, Math.round(n))) });
  },
  setStartFrame(frame) {
    const previous = get().startFrame;
    if (previous?.source === 'file' && previous.previewUrl !== frame?.previewUrl)
      URL.revokeObjectURL(previous.previewUrl);
    if (!frame) {
      set({ startFrame: null, startFrameError: null });
      return;
    }
    const check = checkStartFrame(frame.source === 'file' ? frame : { ...frame, bytes: undefined, mime: undefined });
    if (check.error) {
      if (frame.source === 'file') URL.revokeObjectURL(frame.previewUrl);
      set({ startFrame: null, startFrameError: check.error });
      return;
    }
    set({ startFrame: frame, startFrameError: null });
  },
  setStartFrameDimensions(width, height) {
    const frame = get().startFrame;
    if (frame) set({ startFrame: { ...frame, width, height } });
  },
  refuseStartFrame(message) {
    set({ startFrameError: message });
  },
  applySettings(settings) {
    set((s) => ({
      media: settings.media,
      prompt: settings.prompt,
      historyIndex: -1,
      modelId: settings.modelId,
      version: null,
      params: { ...s.params, ...settings.params },
      modelParams: settings.modelParams ?? {},
      provider: settings.provider ?? null,
      variationOf: null,
      submitError: null,
    }));
  },
  setSubmitAt(at) {
    set({ submitAt: at });
  },
  async generate(model, count = 1) {
    const state = get();
    const blocker = generateBlocker(state, model);
    if (blocker || !model) {
      set({ submitError: blocker });
      return [];
    }
    set({ submitting: true, submitError: null });
    try {
      const request = buildRequest(state, model);
      const variationOf = state.variationOf && state.media === 'video' ? state.variationOf : null;
      const ids = await submitGeneration({
        media: state.media,
        request,
        startFrame: variationOf ? null : state.startFrame,
        count: variationOf ? 1 : count,
        variationOf,
        submitAt: state.submitAt,
      });
      const prompt = state.prompt.trim();
      const history = [prompt, ...get().history.filter((h) => h !== prompt)].slice(0, HISTORY_LIMIT);
      savePref(HISTORY_KEY, history);
      const lastModel = { ...get().lastModel, [state.media]: model.id };
      savePref(LAST_MODEL_KEY, lastModel);
      // Variations are made once per "Make variations" click; the next Generate is an ordinary one.
      // A schedule is for one submission: the next Generate goes now unless set again.
      set({ submitting: false, history, lastModel, historyIndex: -1, variationOf: null, submitAt: null });
      return ids;
    } catch (error) {
      set({ submitting: false, submitError: errorMessage(error) });
      throw error;
    }
  },
  refreshPreview(model) {
    const cancelPending = () => {
      if (previewTimer) clearTimeout(previewTimer);
      previewTimer = null;
    };
    const state = get();
    // Variations are routed by the service from their source video: there is nothing to preview.
    if (!model || state.variationOf) {
      cancelPending();
      previewSeq++;
      set({ preview: initialState.preview });
      return;
    }
    const request = buildRequest(state, model);
    const { routing: _routing, ...routed } = request;
    const frame = state.media === 'video' ? state.startFrame : null;
    const key = JSON.stringify([state.media, routed, frame ? [frame.source, frame.name, frame.previewUrl] : null]);
    // The same request as the one shown or on its way: nothing to ask.
    if (key === state.preview.key && state.preview.status !== 'error') return;
    cancelPending();
    const seq = ++previewSeq;
    set({ preview: { ...get().preview, status: 'loading', key } });
    previewTimer = setTimeout(() => {
      previewTimer = null;
      previewRouting({ media: state.media, request, startFrame: frame })
        .then((data) => {
          if (seq === previewSeq) set({ preview: { status: 'ready', data, error: null, key } });
        })
        .catch((error: unknown) => {
          if (seq === previewSeq) set({ preview: { status: 'error', data: null, error: errorMessage(error), key } });
        });
    }, PREVIEW_DEBOUNCE_MS);
  },
  reset() {
    if (previewTimer) clearTimeout(previewTimer);
    previewSeq++;
    set({ ...initialState, history: [] });
  },
}));

/** `POST /videos/variations` takes n from 1 to 4. */
export const MAX_SOURCE_VARIATIONS = 4;
function clampVariations(n: number): number {
  return Math.min(MAX_SOURCE_VARIATIONS, Math.max(1, Math.round(Number.isFinite(n) ? n : 1)));
}

export { MAX_VARIATIONS };
