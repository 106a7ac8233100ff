import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { formatPrice } from '../../lib/format.ts';
import { isInput } from './selectors.ts';
import { stackVariations, type Stack } from './stacks.ts';

/**
 * How the Library groups its takes (docs/workflows.md, "The Library"; docs/decisions.md): by
 * session, then by prompt, with variations stacked under their source.
 *
 * A session is a run of takes with no gap longer than `SESSION_GAP_MS` between one and the next.
 * It is read off the items' creation times, so it works for every item the library holds,
 * synced ones made elsewhere too, with nothing recorded per job.
 */
export const SESSION_GAP_MS = 2 * 3_600_000;

/** The takes of one prompt within one session: each a stack (a take alone is a stack of one). */
export interface LibraryGroup {
  /** The session's key and the prompt: stable as takes join the group. */
  key: string;
  /** The prompt of its takes; empty for a group of inputs (uploads, extracted frames). */
  prompt: string;
  input: boolean;
  stacks: Stack<LibraryItem>[];
  /** Every take in it, variations included. */
  takes: number;
  /** What its takes cost together (the ones with a price); null when none has one. */
  price: number | null;
  /** Takes without a price (an older service); inputs are not charged, so not counted. */
  unpriced: number;
  /** When its session began (ms): the day its header names. */
  sessionStart: number;
}

export interface LibrarySession {
  key: string;
  /** Creation times (ms) of its newest and its oldest take. */
  newest: number;
  oldest: number;
  groups: LibraryGroup[];
  takes: number;
  price: number | null;
  unpriced: number;
}

const stackKeys = {
  id: (e: LibraryItem) => e.item.id,
  sourceOf: (e: LibraryItem) => e.item.variationOf ?? null,
};

function createdAt(entry: LibraryItem): number {
  const t = Date.parse(entry.item.createdAt);
  return Number.isFinite(t) ? t : 0;
}

function addPrice(total: number | null, price: number | undefined): number | null {
  return price === undefined ? total : (total ?? 0) + price;
}

function makeGroup(key: string, cover: LibraryItem): LibraryGroup {
  const input = isInput(cover.item);
  return {
    key,
    prompt: input ? '' : cover.item.prompt,
    input,
    stacks: [],
    takes: 0,
    price: null,
    unpriced: 0,
    sessionStart: 0,
  };
}

/** A session's stacks, gathered by their source's prompt, in the order each prompt first comes. */
function groupSession(key: string, entries: readonly LibraryItem[]): LibrarySession {
  const groups = new Map<string, LibraryGroup>();
  const session: LibrarySession = { key, newest: 0, oldest: 0, groups: [], takes: 0, price: null, unpriced: 0 };
  session.newest = Number.NEGATIVE_INFINITY;
  session.oldest = Number.POSITIVE_INFINITY;
  for (const entry of entries) {
    const t = createdAt(entry);
    session.newest = Math.max(session.newest, t);
    session.oldest = Math.min(session.oldest, t);
  }
  for (const stack of stackVariations(entries, stackKeys)) {
    const prompt = isInput(stack.cover.item) ? '\u0000input' : stack.cover.item.prompt;
    let group = groups.get(prompt);
    if (!group) {
      group = makeGroup(`${key}/${prompt}`, stack.cover);
      groups.set(prompt, group);
    }
    group.stacks.push(stack);
    for (const take of [stack.cover, ...stack.variations]) {
      group.takes++;
      if (take.item.price === undefined && !group.input) group.unpriced++;
      group.price = addPrice(group.price, take.item.price);
    }
  }
  session.groups = [...groups.values()];
  for (const group of session.groups) {
    group.sessionStart = session.oldest;
    session.takes += group.takes;
    session.unpriced += group.unpriced;
    if (group.price !== null) session.price = (session.price ?? 0) + group.price;
  }
  return session;
}

/**
 * A session's key: its oldest take's id, which stays as new takes join it (on top, newest first),
 * so the grid's rows keep their keys and are not mounted again when a take arrives.
 */
function oldestId(run: readonly LibraryItem[]): string {
  let oldest = run[0]!;
  for (const entry of run) if (createdAt(entry) < createdAt(oldest)) oldest = entry;
  return oldest.item.id;
}

/**
 * The loaded items (in the query's order, newest or oldest first) as sessions of prompt groups.
 * Linear in the items; sessions keep the list's order, so only the order within a session changes.
 */
export function groupLibrary(items: readonly LibraryItem[], gapMs = SESSION_GAP_MS): LibrarySession[] {
  const sessions: LibrarySession[] = [];
  let run: LibraryItem[] = [];
  let previous = 0;
  for (const entry of items) {
    const t = createdAt(entry);
    if (run.length > 0 && Math.abs(t - previous) > gapMs) {
      sessions.push(groupSession(oldestId(run), run));
      run = [];
    }
    run.push(entry);
    previous = t;
  }
  if (run.length > 0) sessions.push(groupSession(oldestId(run), run));
  return sessions;
}

function startOfDay(t: number): number {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** "Today", "Yesterday", else the date ("Sat, 5 Dec 2026"): the day a session began. */
export function sessionDay(t: number, now: number): string {
  const days = Math.round((startOfDay(now) - startOfDay(t)) / 86_400_000);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  return new Date(t).toLocaleDateString(undefined, {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  });
}

/** "14:02–15:40" (in the locale's own way): the hours a session spans. */
export function sessionHours(session: Pick<LibrarySession, 'newest' | 'oldest'>): string {
  const time = (t: number) => new Date(t).toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit' });
  const from = time(session.oldest);
  const to = time(session.newest);
  return from === to ? from : `${from} – ${to}`;
}

/** "$0.40", "$0.40 + 2 unpriced", "not charged" (inputs), "—": what a header says its takes cost. */
export function totalPriceText(total: Pick<LibraryGroup, 'price' | 'unpriced'>, input = false): string {
  if (input) return 'not charged';
  if (total.price === null) return '—';
  const price = formatPrice(total.price);
  return total.unpriced > 0 ? `${price} + ${total.unpriced} unpriced` : price;
}
