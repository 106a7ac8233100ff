import type { StateCreator } from 'zustand';
import type { ExportFormat, LocalFile } from '../../../../shared/ipc/index.ts';
import type { LibraryFilters, LibraryState } from './initialState.ts';

export interface LibraryActions {
  /**
   * Runs the query again from the first page. `keepLoaded` (a sync, a finished job, Refresh) is
   * the same query refreshed: the selection and the pages loaded below the first one stay.
   */
  reload: (opts?: { keepLoaded?: boolean }) => Promise<void>;
  /** Fetches the next page, if any. */
  loadMore: () => Promise<void>;
  /** Loads pages until `index` is loaded (the grid scrolled there) or nothing is left. */
  ensureLoaded: (index: number) => Promise<void>;
  setFilters: (patch: Partial<LibraryFilters>) => void;
  clearFilters: () => void;
  /** Opens a variation stack in place, or closes it (by its cover's id). */
  toggleStack: (id: string) => void;
  /** `index` counts in the grid's order (stores/library/view.ts). Plain click selects one; `additive` (Ctrl/Cmd) toggles; `range` (Shift) extends from the anchor. */
  select: (index: number, mode?: { additive?: boolean; range?: boolean }) => void;
  toggleSelected: (id: string) => void;
  selectAll: () => void;
  clearSelection: () => void;
  open: (id: string | null) => void;
  /** Opens an item by id, fetching it when it is not on a loaded page (a variation's source, a job's result). */
  openById: (id: string) => Promise<void>;
  /** Replaces items main reports as changed. */
  refreshItems: (ids: string[]) => Promise<void>;
  setFavourite: (ids: string[], favourite: boolean) => Promise<void>;
  download: (ids: string[]) => Promise<void>;
  /** Downloads one item anew although a copy is on disk, and reports where it went or why it could not. */
  downloadAgain: (id: string) => Promise<void>;
  reveal: (id: string) => Promise<void>;
  retain: (id: string) => Promise<void>;
  exportAs: (id: string, format: ExportFormat) => Promise<LocalFile | null>;
  useLastFrame: (id: string) => Promise<LocalFile | null>;
  setPlayerMuted: (muted: boolean) => void;
  reset: () => void;
}

export type LibraryStore = LibraryState & LibraryActions;

/**
 * One part of the store (docs/architecture.md, "Layout"): made with the whole store's
 * `set` and `get`, as zustand's slices pattern has it, and spread into `useLibrary`.
 */
export type LibrarySlice<K extends keyof LibraryStore> = StateCreator<LibraryStore, [], [], Pick<LibraryStore, K>>;
