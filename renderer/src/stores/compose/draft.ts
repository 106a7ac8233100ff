import type { ComposeSlice } from './actions.ts';
import { keptModelParams } from './modelParams.ts';
import { defaultParams } from './selectors.ts';

/** What the form holds: the kind, the prompt (and its history), the model, its parameters, the route. */
export const createDraftSlice: ComposeSlice<
  | 'setMedia'
  | 'setPrompt'
  | 'recallHistory'
  | 'selectModel'
  | 'preselect'
  | 'setVersion'
  | 'setParam'
  | 'setModelParam'
  | 'setProvider'
  | 'setRouting'
  | 'applySettings'
  | 'restoreDraft'
> = (set, get) => ({
  setMedia(media) {
    if (media === get().media) return;
    set({
      media,
      modelId: null,
      version: null,
      params: { public: get().params.public },
      modelParams: {},
      provider: null,
      missingModel: null,
      restoreNotice: null,
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
      missingModel: null,
      restoreNotice: null,
      submitError: null,
    });
  },
  preselect(models) {
    const { modelId, media, lastModel, missingModel } = get();
    if (modelId !== null || missingModel !== null) return;
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
      missingModel: null,
      restoreNotice: null,
      submitError: null,
    }));
  },
  restoreDraft(draft) {
    set({
      media: draft.media,
      prompt: draft.prompt,
      historyIndex: -1,
      modelId: draft.modelId,
      version: draft.version,
      // The job's own values only: the model's defaults would stand in for what it did not send.
      params: { public: false, ...draft.params },
      modelParams: draft.modelParams,
      provider: draft.provider,
      routing: draft.routing,
      startFrame: draft.startFrame,
      startFrameError: null,
      endFrame: draft.endFrame,
      endFrameError: null,
      variationOf: null,
      missingModel: draft.missingModel,
      restoreNotice: draft.notice,
      submitError: null,
    });
  },
});
