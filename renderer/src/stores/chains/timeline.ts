import type { ChainShot, ChainView } from '../../../../shared/ipc/index.ts';

// The shot chain as a timeline (docs/workflows.md, "The canvas" and "Shot chains"): the pure rules
// behind it (what is shown, how wide a shot is, where a moved shot goes, what a trim handle may do),
// so the component only draws and the rules are tested without a page.

/** The shortest part of a clip a trim may keep, in seconds. */
export const MIN_TRIM_SECONDS = 0.2;
/** A trim handle's keyboard steps, in seconds: an arrow, and Shift with an arrow. */
export const TRIM_STEP = 0.1;
export const TRIM_STEP_LARGE = 1;

export interface Trim {
  start: number;
  end: number;
}

const tenth = (n: number) => Math.round(n * 10) / 10;

/**
 * Whether the take `itemId` shows its chain: it is a shot of a chain of two or more, or a first shot
 * that continues another chain's shot (a branch), as the Library's chain strip decides it too.
 */
export function showsChain(chain: ChainView | null | undefined, itemId: string | null): chain is ChainView {
  if (!chain?.chainId || !itemId) return false;
  const self = chain.shots.find((s) => s.itemId === itemId);
  return !!self && (chain.shots.length >= 2 || self.parentId !== null);
}

/** The clip's whole length in seconds (0 when the index does not know the item). */
export function clipSeconds(shot: ChainShot): number {
  return shot.item?.item.duration ?? 0;
}

/** What the shot plays in the sequence: its trimmed part, else the whole clip. */
export function playedSeconds(shot: ChainShot): number {
  return shot.trim ? shot.trim.end - shot.trim.start : clipSeconds(shot);
}

/** The sequence's length in seconds. */
export function chainSeconds(shots: readonly ChainShot[]): number {
  return tenth(shots.reduce((sum, s) => sum + playedSeconds(s), 0));
}

/**
 * Each shot's share of the timeline's width (they sum to 1), by the length of its whole clip, so the
 * trim handles sit inside the clip they cut. No shot gets less than `minShare`, so a short or unknown
 * clip stays a target a pointer can hit.
 */
export function shotShares(shots: readonly ChainShot[], minShare = 0.06): number[] {
  if (shots.length === 0) return [];
  const floor = Math.min(minShare, 1 / shots.length);
  const seconds = shots.map(clipSeconds);
  const total = seconds.reduce((a, b) => a + b, 0);
  if (total <= 0) return shots.map(() => 1 / shots.length);
  const raw = seconds.map((s) => s / total);
  // The shares below the floor are raised to it; the rest give it up in proportion.
  const small = raw.map((r) => r < floor);
  const raised = small.filter(Boolean).length * floor;
  const rest = raw.reduce((sum, r, i) => (small[i] ? sum : sum + r), 0);
  return raw.map((r, i) => (small[i] ? floor : rest > 0 ? (r / rest) * (1 - raised) : 0));
}

/**
 * The place (1-based) a shot moves to when moved `delta` places (−1 earlier, +1 later), or null when
 * it is already at that end.
 */
export function steppedPosition(shots: readonly ChainShot[], itemId: string, delta: number): number | null {
  const index = shots.findIndex((s) => s.itemId === itemId);
  if (index === -1) return null;
  const to = index + delta;
  return to < 0 || to >= shots.length ? null : to + 1;
}

/**
 * The chain with `itemId` moved to `position` (1-based, clamped), every shot numbered again in its new
 * order: what the timeline shows at once, before main answers with the same order.
 */
export function movedChain(chain: ChainView, itemId: string, position: number): ChainView {
  const moving = chain.shots.find((s) => s.itemId === itemId);
  if (!moving) return chain;
  const rest = chain.shots.filter((s) => s.itemId !== itemId);
  const at = Math.min(Math.max(1, Math.round(position)), rest.length + 1);
  rest.splice(at - 1, 0, moving);
  return { ...chain, shots: rest.map((s, i) => ({ ...s, position: i + 1 })) };
}

/** The trim a shot has now in the timeline: its own, else the whole clip. */
export function currentTrim(shot: ChainShot): Trim {
  return shot.trim ?? { start: 0, end: clipSeconds(shot) };
}

/**
 * One handle moved to `seconds`: kept inside the clip and at least MIN_TRIM_SECONDS from the other
 * handle, in tenths of a second (the precision the Library's trim fields take).
 */
export function movedTrim(duration: number, trim: Trim, edge: 'start' | 'end', seconds: number): Trim {
  const gap = Math.min(MIN_TRIM_SECONDS, duration);
  if (edge === 'start') return { start: tenth(Math.min(Math.max(0, seconds), trim.end - gap)), end: trim.end };
  return { start: trim.start, end: tenth(Math.max(Math.min(duration, seconds), trim.start + gap)) };
}

/** A handle dragged `dx` pixels across a clip drawn `width` pixels wide. */
export function draggedTrim(duration: number, width: number, trim: Trim, edge: 'start' | 'end', dx: number): Trim {
  if (width <= 0) return trim;
  const from = edge === 'start' ? trim.start : trim.end;
  return movedTrim(duration, trim, edge, from + (dx / width) * duration);
}

/** A handle's keys: arrows step a tenth (a second with Shift), Home and End go to the clip's ends. */
export function keyedTrim(
  duration: number,
  trim: Trim,
  edge: 'start' | 'end',
  key: string,
  shift: boolean,
): Trim | null {
  const from = edge === 'start' ? trim.start : trim.end;
  const step = shift ? TRIM_STEP_LARGE : TRIM_STEP;
  const to =
    key === 'ArrowLeft' || key === 'ArrowDown'
      ? from - step
      : key === 'ArrowRight' || key === 'ArrowUp'
        ? from + step
        : key === 'Home'
          ? 0
          : key === 'End'
            ? duration
            : null;
  return to === null ? null : movedTrim(duration, trim, edge, to);
}

/**
 * What to store for a trim: the in and out points, or null ("Use whole clip") when they are the
 * clip's own ends, so an untouched shot keeps no trim.
 */
export function trimToStore(duration: number, trim: Trim): Trim | null {
  return trim.start <= 0.05 && trim.end >= duration - 0.05 ? null : { start: tenth(trim.start), end: tenth(trim.end) };
}
