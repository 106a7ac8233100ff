import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import type { MediaKind, MediaSort } from '../../../../shared/api/media.ts';
import type { LoadStatus } from '../models/initialState.ts';

export interface LibraryFilters {
  media: MediaKind | null;
  size: string | null;
  model: string | null;
  provider: string | null;
  search: string;
  sort: MediaSort;
  downloaded: boolean;
  favourite: boolean;
  expiringSoon: boolean;
  /** Generated takes, or the creator's inputs (uploads, extracted frames): never both mixed. */
  origin: 'takes' | 'inputs';
  /** Show other users' public media (the service's feed) instead of the local library. */
  publicFeed: boolean;
}

export interface LibraryState {
  status: LoadStatus;
  error: string | null;
  filters: LibraryFilters;
  /** Loaded so far, in order; the grid asks for more as it scrolls. */
  items: LibraryItem[];
  total: number;
  /** Opaque cursor (library) or next page number (feed); null when everything is loaded. */
  nextCursor: string | null;
  loadingMore: boolean;
  /** Bumped on every new query so late answers to an old one are dropped. */
  generation: number;
  selected: Record<string, true>;
  /** Index of the last plain click, for shift-click ranges. */
  anchor: number | null;
  detailId: string | null;
  /** The open item when it is not among the loaded pages (the source a "Variation of" link opened). */
  detailExtra: LibraryItem | null;
  /** Item id → running export or download label, for the detail panel. */
  busy: Record<string, string>;
  /** Variation stacks shown open, by their cover's (the source's) id (docs/workflows.md, "The Library"). */
  expanded: Record<string, true>;
  /** The player's sound is off; kept for the session (every clip opened after), not saved. */
  playerMuted: boolean;
}

export const PAGE_SIZE = 500;
export const FEED_PAGE_SIZE = 100;
/** "Expiring soon": within three days. */
export const EXPIRING_SOON_HOURS = 72;

export const defaultFilters: LibraryFilters = {
  media: null,
  size: null,
  model: null,
  provider: null,
  search: '',
  sort: 'newest',
  downloaded: false,
  favourite: false,
  expiringSoon: false,
  origin: 'takes',
  publicFeed: false,
};

export const initialState: LibraryState = {
  status: 'idle',
  error: null,
  filters: defaultFilters,
  items: [],
  total: 0,
  nextCursor: null,
  loadingMore: false,
  generation: 0,
  selected: {},
  anchor: null,
  detailId: null,
  detailExtra: null,
  busy: {},
  expanded: {},
  playerMuted: false,
};
