import { create } from 'zustand';
import type { ProviderKeyId, ProvidersList } from '../../../../../shared/ipc/index.ts';
import { providerBaseUrlProblem, providerKeyProblem } from '../../../../../shared/ipc/provider-rules.ts';
import { withDeadline } from '../../../lib/deadline.ts';
import { errorMessage, ipc } from '../../../lib/ipc.ts';
import { toastError, toastSuccess } from '../../../stores/toasts/index.ts';
import { initialState, type ProviderAction, type ProvidersState } from './initialState.ts';

export interface ProvidersActions {
  load: () => Promise<void>;
  /** The key goes to main and is never kept here; only `last4` comes back. False: not saved (see keyErrors). */
  setKey: (id: ProviderKeyId, key: string) => Promise<boolean>;
  removeKey: (id: ProviderKeyId) => Promise<void>;
  testKey: (id: ProviderKeyId) => Promise<void>;
  setEnabled: (id: ProviderKeyId, enabled: boolean) => Promise<void>;
  /** null restores the provider's own address. False: not saved (see urlErrors). */
  setBaseUrl: (id: ProviderKeyId, baseUrl: string | null) => Promise<boolean>;
  /** Settings → "Refresh models": the Local engine syncs its catalog; main then has the models reloaded. */
  refreshModels: () => Promise<void>;
  clearKeyError: (id: string) => void;
  reset: () => void;
}

export type ProvidersStore = ProvidersState & ProvidersActions;

function without<T>(map: Record<string, T>, id: string): Record<string, T> {
  const next = { ...map };
  delete next[id];
  return next;
}

export const useProviders = create<ProvidersStore>()((set, get) => {
  const list = (l: ProvidersList): Partial<ProvidersState> => ({
    status: 'ready',
    error: null,
    keysHeldBy: l.keysHeldBy,
    keyStore: l.keyStore ?? null,
    keyStoreAvailable: l.keyStoreAvailable ?? true,
    providers: l.providers,
  });
  const begin = (id: string, action: ProviderAction) => set((s) => ({ busy: { ...s.busy, [id]: action } }));
  const end = (id: string) => set((s) => ({ busy: without(s.busy, id) }));
  const nameOf = (id: string) => get().providers.find((p) => p.id === id)?.name ?? id;

  return {
    ...initialState,
    async load() {
      // A reload after a change keeps the list on screen; only the first load shows a skeleton.
      if (get().status !== 'ready') set({ status: 'loading', error: null });
      try {
        set(list(await withDeadline(ipc().providers.list(), 'The provider list')));
      } catch (error) {
        set({ status: 'error', error: errorMessage(error) });
      }
    },
    async setKey(id, key) {
      const problem = providerKeyProblem(key);
      if (problem) {
        set((s) => ({ keyErrors: { ...s.keyErrors, [id]: problem } }));
        return false;
      }
      begin(id, 'saving');
      try {
        const next = await ipc().providers.setKey({ id, key });
        set((s) => ({ ...list(next), keyErrors: without(s.keyErrors, id), tests: without(s.tests, id) }));
        toastSuccess('Key saved', `${nameOf(id)}'s key is in the OS keychain. It will not be shown again.`);
        return true;
      } catch (error) {
        set((s) => ({ keyErrors: { ...s.keyErrors, [id]: errorMessage(error) } }));
        return false;
      } finally {
        end(id);
      }
    },
    async removeKey(id) {
      begin(id, 'removing');
      try {
        const next = await ipc().providers.removeKey({ id });
        set((s) => ({ ...list(next), tests: without(s.tests, id) }));
      } catch (error) {
        toastError(`Could not remove ${nameOf(id)}'s key`, error);
      } finally {
        end(id);
      }
    },
    async testKey(id) {
      begin(id, 'testing');
      try {
        const result = await ipc().providers.testKey({ id });
        set((s) => ({ tests: { ...s.tests, [id]: result } }));
      } catch (error) {
        set((s) => ({ tests: { ...s.tests, [id]: { ok: false, message: errorMessage(error) } } }));
      } finally {
        end(id);
      }
    },
    async setEnabled(id, enabled) {
      // Shown at once; put back if main refuses.
      const previous = get().providers;
      set({ providers: previous.map((p) => (p.id === id ? { ...p, enabled } : p)) });
      begin(id, 'switching');
      try {
        set(list(await ipc().providers.setEnabled({ id, enabled })));
      } catch (error) {
        set({ providers: previous });
        toastError(`Could not switch ${nameOf(id)} ${enabled ? 'on' : 'off'}`, error);
      } finally {
        end(id);
      }
    },
    async setBaseUrl(id, baseUrl) {
      const problem = baseUrl === null ? null : providerBaseUrlProblem(baseUrl.trim());
      if (problem) {
        set((s) => ({ urlErrors: { ...s.urlErrors, [id]: problem } }));
        return false;
      }
      begin(id, 'url');
      try {
        const next = await ipc().providers.setBaseUrl({ id, baseUrl: baseUrl === null ? null : baseUrl.trim() });
        set((s) => ({ ...list(next), urlErrors: without(s.urlErrors, id) }));
        return true;
      } catch (error) {
        set((s) => ({ urlErrors: { ...s.urlErrors, [id]: errorMessage(error) } }));
        return false;
      } finally {
        end(id);
      }
    },
    async refreshModels() {
      if (get().refresh.running) return;
      set({ refresh: { running: true, report: null, error: null } });
      try {
        const report = await ipc().providers.refreshModels();
        set({ refresh: { running: false, report, error: null } });
      } catch (error) {
        set({ refresh: { running: false, report: null, error: errorMessage(error) } });
      }
    },
    clearKeyError(id) {
      set((s) => ({ keyErrors: without(s.keyErrors, id) }));
    },
    reset() {
      set(initialState);
    },
  };
});
