import { errorMessage } from '../../lib/ipc.ts';
import { loadPref, savePref } from '../../lib/prefs.ts';
import type { ComposeSlice } from './actions.ts';
import { useStage } from '../stage/index.ts';
import { submitGeneration } from './api.ts';
import { HISTORY_LIMIT, type ComposeState } from './initialState.ts';
import { buildRequest, generateBlocker, endFrameFor } from './selectors.ts';

const HISTORY_KEY = 'compose.history';
const LAST_MODEL_KEY = 'compose.lastModel';

/**
 * Generate: submits the request, and remembers the prompt and the model it went with (kept across
 * sessions, so the creator's history and last model are read back when the store is made).
 */
export const createSubmitSlice: ComposeSlice<'history' | 'lastModel' | 'generate' | 'setSubmitAt'> = (set, get) => ({
  history: loadPref<string[]>(HISTORY_KEY, []),
  lastModel: loadPref<ComposeState['lastModel']>(LAST_MODEL_KEY, {}),
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
      const jobs = await submitGeneration(request, variationOf ? null : state.startFrame, {
        count: variationOf ? 1 : count,
        variationOf,
        submitAt: state.submitAt,
        endFrame: endFrameFor(state, model),
      });
      const prompt = state.prompt.trim();
      const history = [prompt, ...get().history.filter((h) => h !== prompt)].slice(0, HISTORY_LIMIT);
      savePref(HISTORY_KEY, history);
      const lastModel = { ...get().lastModel, [state.media]: model.id };
      savePref(LAST_MODEL_KEY, lastModel);
      // Variations are made once per "Make variations" click; the next Generate is an ordinary one.
      // A schedule is for one submission: the next Generate goes now unless set again.
      set({ submitting: false, history, lastModel, historyIndex: -1, variationOf: null, submitAt: null });
      // The canvas: the new take goes on the stage of this same screen (variations stack under their source).
      useStage.getState().addJobs(jobs, !variationOf);
      return jobs.map((j) => j.id);
    } catch (error) {
      set({ submitting: false, submitError: errorMessage(error) });
      throw error;
    }
  },
});
