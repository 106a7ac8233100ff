import { create } from 'zustand';
import { withDeadline } from '../../lib/deadline.ts';
import { errorMessage, ipc } from '../../lib/ipc.ts';
import { initialState, type ModelsState } from './initialState.ts';
import { usableModels } from './selectors.ts';

export interface ModelsActions {
  load: () => Promise<void>;
  /** Reloads after a provider change, keeping the list on screen meanwhile. */
  refresh: () => Promise<void>;
  setSearch: (search: string) => void;
  toggleCapability: (capability: string) => void;
  reset: () => void;
}

export type ModelsStore = ModelsState & ModelsActions;

async function fetchCatalog(): Promise<Pick<ModelsState, 'models' | 'catalog' | 'providers'>> {
  const [models, providers] = await withDeadline(
    Promise.all([ipc().models.list(undefined), ipc().providers.list()]),
    'The model list',
  );
  return {
    models: usableModels(models.models, providers.providers),
    catalog: models.models,
    providers: providers.providers,
  };
}

export const useModels = create<ModelsStore>()((set, get) => ({
  ...initialState,
  async load() {
    if (get().status === 'loading') return;
    set({ status: 'loading', error: null });
    try {
      set({ status: 'ready', ...(await fetchCatalog()) });
    } catch (error) {
      set({ status: 'error', error: errorMessage(error) });
    }
  },
  async refresh() {
    if (get().status !== 'ready') return get().load();
    try {
      set(await fetchCatalog());
    } catch {
      // The list on screen stays; the next load reports the error.
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
