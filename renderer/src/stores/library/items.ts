import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';
import { toastError, toastSuccess } from '../toasts/index.ts';
import type { LibrarySlice } from './actions.ts';

/**
 * What is done to loaded items: changes main reports, favourites, downloads, exports. A running
 * action shows as the item's `busy` label, and a failure as a toast.
 */
export const createItemsSlice: LibrarySlice<
  'refreshItems' | 'setFavourite' | 'download' | 'downloadAgain' | 'reveal' | 'retain' | 'exportAs' | 'useLastFrame'
> = (set, get) => {
  function patchItems(update: (entry: LibraryItem) => LibraryItem | null): void {
    set((s) => ({ items: s.items.map((e) => update(e) ?? e) }));
  }

  async function busy<T>(id: string, label: string, title: string, run: () => Promise<T>): Promise<T | null> {
    set((s) => ({ busy: { ...s.busy, [id]: label } }));
    try {
      return await run();
    } catch (error) {
      toastError(title, error);
      return null;
    } finally {
      set((s) => {
        const { [id]: _done, ...rest } = s.busy;
        return { busy: rest };
      });
    }
  }

  return {
    async refreshItems(ids) {
      if (get().filters.publicFeed) return;
      const loaded = new Set(get().items.map((e) => e.item.id));
      const wanted = ids.filter((id) => loaded.has(id));
      const fresh = await Promise.all(
        wanted.map((id) =>
          ipc()
            .library.get({ id })
            .catch(() => null),
        ),
      );
      const byId = new Map(fresh.filter((e): e is LibraryItem => e !== null).map((e) => [e.item.id, e]));
      if (byId.size > 0) patchItems((e) => byId.get(e.item.id) ?? null);
    },
    async setFavourite(ids, favourite) {
      if (ids.length === 0) return;
      const set_ = new Set(ids);
      patchItems((e) => (set_.has(e.item.id) ? { ...e, favourite } : null));
      try {
        await ipc().library.setFavourite({ ids, favourite });
      } catch (error) {
        patchItems((e) => (set_.has(e.item.id) ? { ...e, favourite: !favourite } : null));
        toastError(favourite ? 'Could not add to favourites' : 'Could not remove from favourites', error);
      }
    },
    async download(ids) {
      if (ids.length === 0) return;
      const label = ids.length === 1 ? ids[0]! : 'bulk';
      await busy(label, 'Downloading…', 'Download failed', async () => {
        const res = await ipc().library.download({ ids });
        const parts = [];
        if (res.queued.length) parts.push(`${res.queued.length} downloading`);
        if (res.present.length) parts.push(`${res.present.length} already on disk`);
        toastSuccess(ids.length === 1 ? 'Download started' : `Downloading ${ids.length} items`, parts.join(', '));
      });
    },
    async downloadAgain(id) {
      await busy(id, 'Downloading again…', 'Could not download again', async () => {
        const entry = await ipc().library.downloadAgain({ id });
        patchItems((e) => (e.item.id === id ? entry : null));
        if (get().detailExtra?.item.id === id) set({ detailExtra: entry });
        toastSuccess('Downloaded again', entry.localPath ?? '');
      });
    },
    async reveal(id) {
      await busy(id, 'Revealing…', 'Could not reveal the file', async () => {
        const res = await ipc().library.reveal({ id });
        if (!res.revealed) toastSuccess('Saved at', res.path);
      });
    },
    async retain(id) {
      await busy(id, 'Extending…', 'Could not extend retention', async () => {
        const entry = await ipc().library.retain({ id, forever: true });
        patchItems((e) => (e.item.id === id ? entry : null));
        toastSuccess('Kept for good', 'The service will not delete this item.');
      });
    },
    exportAs(id, format) {
      return busy(id, `Exporting ${format.toUpperCase()}…`, `Export to ${format} failed`, async () => {
        const file = await ipc().library.export({ id, format });
        toastSuccess('Export ready', file.path);
        return file;
      });
    },
    useLastFrame(id) {
      return busy(id, 'Extracting last frame…', 'Could not extract the last frame', () =>
        ipc().library.useLastFrame({ id }),
      );
    },
  };
};
