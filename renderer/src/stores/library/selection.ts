import { ipc } from '../../lib/ipc.ts';
import { toastError } from '../toasts/index.ts';
import type { LibrarySlice } from './actions.ts';
import { gridView } from './view.ts';

/** Which items are selected (click, Ctrl/Cmd, Shift ranges), and the one the detail panel shows. */
export const createSelectionSlice: LibrarySlice<
  'toggleStack' | 'select' | 'toggleSelected' | 'selectAll' | 'clearSelection' | 'open' | 'openById' | 'setPlayerMuted'
> = (set, get) => ({
  toggleStack(id) {
    set((s) => {
      const { [id]: open, ...rest } = s.expanded;
      return { expanded: open ? rest : { ...rest, [id]: true } };
    });
  },
  select(index, mode = {}) {
    const { anchor, selected } = get();
    // The grid's order, not the pages': a range is what the creator sees between the two clicks.
    const items = gridView(get()).order;
    const entry = items[index];
    if (!entry) return;
    const id = entry.item.id;
    if (mode.range && anchor !== null) {
      const [from, to] = anchor < index ? [anchor, index] : [index, anchor];
      const next: Record<string, true> = mode.additive ? { ...selected } : {};
      for (let i = from; i <= to; i++) {
        const e = items[i];
        if (e) next[e.item.id] = true;
      }
      set({ selected: next });
      return;
    }
    if (mode.additive) {
      const next = { ...selected };
      if (next[id]) delete next[id];
      else next[id] = true;
      set({ selected: next, anchor: index });
      return;
    }
    set({ selected: { [id]: true }, anchor: index, detailId: id });
  },
  toggleSelected(id) {
    const next = { ...get().selected };
    if (next[id]) delete next[id];
    else next[id] = true;
    const index = gridView(get()).order.findIndex((e) => e.item.id === id);
    set({ selected: next, anchor: index >= 0 ? index : get().anchor });
  },
  selectAll() {
    set((s) => ({ selected: Object.fromEntries(s.items.map((e) => [e.item.id, true as const])) }));
  },
  clearSelection() {
    set({ selected: {}, anchor: null });
  },
  open(id) {
    set({ detailId: id });
  },
  async openById(id) {
    if (get().items.some((e) => e.item.id === id)) {
      set({ detailId: id });
      return;
    }
    try {
      const entry = await ipc().library.get({ id });
      set({ detailExtra: entry, detailId: id });
    } catch (error) {
      toastError('Could not open the item', error);
    }
  },
  setPlayerMuted(muted) {
    set({ playerMuted: muted });
  },
});
