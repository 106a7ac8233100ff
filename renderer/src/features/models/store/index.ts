import { create } from 'zustand';
import { errorMessage, ipc } from '../../../lib/ipc.ts';
import { initialState, type ModelsState } from './initialState.ts';

export interface ModelsActions {
  load: () => Promise<void>;
  setSearch: (search: string) => void;
  toggleCapability: (capability: string) => void;
  reset: () => void;
}

export type ModelsStore = ModelsState & ModelsActions;

export const useModels = create<ModelsStore>()((set, get) => ({
  ...initialState,
  async load() {
    if (get().status === 'loading') return;
    set({ status: 'loading', error: null });
    try {
      const [models, providers] = await Promise.all([ipc().models.list(undefined), ipc().providers.list()]);
      set({ status: 'ready', models: models.models, providers: providers.providers });
    } catch (error) {
      set({ status: 'error', error: errorMessage(error) });
    }
  },
  setSearch(search) {
    set({ search });
  },
  toggleCapability(capability) {
    set((s) => ({
      capabilities: s.capabilities.includes(capability)
        ? s.capabilities.filter((c) => c !== capability)
        : [...s.capabilities, capability],
    }));
  },
  reset() {
    set(initialState);
  },
}));
