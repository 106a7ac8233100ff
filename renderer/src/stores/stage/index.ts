import { create } from 'zustand';
import type { Job, LibraryItem } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';
import { toggleCompared, type StageEntry } from './takes.ts';

export type { StageEntry, Take } from './takes.ts';
export { MAX_COMPARE } from './takes.ts';

/** How many variations the stage's Variations button makes unless the creator picks another. */
export const DEFAULT_VARIATIONS = 2;

export interface StageState {
  /** What this window made or opened onto the stage, oldest first (the session). */
  entries: StageEntry[];
  /** Jobs as main last reported them (job events), or as their submit answered. */
  submitted: Record<string, Job>;
  /** Library items of the session's takes, fetched as their jobs finish. */
  items: Record<string, LibraryItem>;
  /** The take the creator put on the stage; null follows the newest. */
  focus: StageEntry | null;
  /** Items chosen to play side by side (2–4). */
  compare: string[];
  comparing: boolean;
  variationCount: number;
  /** Which take action is being sent ("reroll", "variations" …), so its button says so. */
  busy: string | null;
  /** Bumped to move the keyboard focus to the prompt (Extend). */
  promptFocus: number;
}

export interface StageActions {
  /** Jobs just submitted join the session; `show` puts the first on the stage. */
  addJobs: (jobs: readonly Job[], show: boolean) => void;
  /** A job event: the newest state of a job (the session's takes follow it). */
  updateJob: (job: Job) => void;
  /** A Library item on the stage (opening a take from the Library). */
  showItem: (entry: LibraryItem) => void;
  focusTake: (entry: StageEntry | null) => void;
  remember: (entries: readonly LibraryItem[]) => void;
  /** Fetches the items not cached yet (a finished take's); each id once at a time. */
  loadItems: (ids: readonly string[]) => Promise<void>;
  toggleCompare: (itemId: string) => void;
  setComparing: (on: boolean) => void;
  setVariationCount: (n: number) => void;
  setBusy: (what: string | null) => void;
  focusPrompt: () => void;
  reset: () => void;
}

const initial: StageState = {
  entries: [],
  submitted: {},
  items: {},
  focus: null,
  compare: [],
  comparing: false,
  variationCount: DEFAULT_VARIATIONS,
  busy: null,
  promptFocus: 0,
};

const loading = new Set<string>();

/** The canvas's session (docs/workflows.md, "The canvas"): its takes, the one on the stage, the compared ones. */
export const useStage = create<StageState & StageActions>()((set, get) => ({
  ...initial,
  addJobs(jobs, show) {
    if (jobs.length === 0) return;
    set((s) => ({
      entries: [...s.entries, ...jobs.map((j) => ({ kind: 'job' as const, id: j.id }))],
      // An event may have overtaken the submit's answer: the newer state stays.
      submitted: { ...Object.fromEntries(jobs.map((j) => [j.id, j])), ...s.submitted },
      ...(show ? { focus: { kind: 'job' as const, id: jobs[0]!.id }, comparing: false } : {}),
    }));
  },
  updateJob(job) {
    set((s) => ({ submitted: { ...s.submitted, [job.id]: job } }));
  },
  showItem(entry) {
    const id = entry.item.id;
    set((s) => ({
      items: { ...s.items, [id]: entry },
      entries: s.entries.some((e) => e.kind === 'item' && e.id === id)
        ? s.entries
        : [...s.entries, { kind: 'item', id }],
      focus: { kind: 'item', id },
      comparing: false,
    }));
  },
  focusTake(entry) {
    set({ focus: entry, comparing: false });
  },
  remember(entries) {
    if (entries.length === 0) return;
    set((s) => ({ items: { ...s.items, ...Object.fromEntries(entries.map((e) => [e.item.id, e])) } }));
  },
  async loadItems(ids) {
    const wanted = ids.filter((id) => !get().items[id] && !loading.has(id));
    wanted.forEach((id) => loading.add(id));
    try {
      const got = await Promise.allSettled(wanted.map((id) => ipc().library.get({ id })));
      get().remember(got.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])));
    } finally {
      wanted.forEach((id) => loading.delete(id));
    }
  },
  toggleCompare(itemId) {
    set((s) => {
      const compare = toggleCompared(s.compare, itemId);
      return { compare, comparing: s.comparing && compare.length >= 2 };
    });
  },
  setComparing(on) {
    set((s) => ({ comparing: on && s.compare.length >= 2 }));
  },
  setVariationCount(n) {
    set({ variationCount: Math.min(4, Math.max(1, Math.round(n))) });
  },
  setBusy(what) {
    set({ busy: what });
  },
  focusPrompt() {
    set((s) => ({ promptFocus: s.promptFocus + 1 }));
  },
  reset() {
    loading.clear();
    set(initial);
  },
}));
