// The shot chain as a timeline (docs/workflows.md, "The canvas"): which takes show one, how wide a
// shot is, where a moved shot goes, what a trim handle may do and what a trim stores.
import { describe, expect, it } from 'vitest';
import type { ChainView } from '../../../../shared/ipc/index.ts';
import {
  chainSeconds,
  draggedTrim,
  keyedTrim,
  movedChain,
  movedTrim,
  shotShares,
  showsChain,
  steppedPosition,
  trimToStore,
} from '../../../../renderer/src/stores/chains/timeline.ts';
import { libraryItem } from '../fixtures.ts';

/** A chain of the given clip lengths (seconds): shots m_1, m_2 … in that order. */
function chain(durations: number[], trims: Record<number, { start: number; end: number }> = {}): ChainView {
  return {
    chainId: 'm_1',
    shots: durations.map((duration, i) => ({
      itemId: `m_${i + 1}`,
      position: i + 1,
      parentId: i === 0 ? null : `m_${i}`,
      sourceImageSha256: null,
      trim: trims[i + 1] ?? null,
      item: withDuration(i + 1, duration),
    })),
  };
}
function withDuration(i: number, duration: number) {
  const entry = libraryItem(i);
  return { ...entry, item: { ...entry.item, duration } };
}
const order = (c: ChainView) => c.shots.map((s) => [s.itemId, s.position]);

describe('which takes show the timeline', () => {
  it('a shot of a chain of two or more, or a branch’s first shot; not a lone clip or another item', () => {
    expect(showsChain(chain([4, 4]), 'm_2')).toBe(true);
    expect(showsChain(chain([4]), 'm_1')).toBe(false);
    const branch = chain([4]);
    branch.shots[0]!.parentId = 'm_9';
    expect(showsChain(branch, 'm_1')).toBe(true);
    expect(showsChain(chain([4, 4]), 'm_7')).toBe(false);
    expect(showsChain({ chainId: null, shots: [] }, 'm_1')).toBe(false);
    expect(showsChain(chain([4, 4]), null)).toBe(false);
  });
});

describe('widths by duration', () => {
  it('shares follow each clip’s length and sum to 1', () => {
    const shares = shotShares(chain([2, 6]).shots);
    expect(shares[0]).toBeCloseTo(0.25);
    expect(shares[1]).toBeCloseTo(0.75);
  });
  it('a very short or unknown clip keeps a share a pointer can hit; the rest give it up in proportion', () => {
    const shares = shotShares(chain([0.1, 10, 10]).shots, 0.1);
    expect(shares[0]).toBeCloseTo(0.1);
    expect(shares[1]).toBeCloseTo(0.45);
    expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(shotShares(chain([0, 0]).shots)).toEqual([0.5, 0.5]);
  });
  it('the sequence is as long as the parts the shots play', () => {
    expect(chainSeconds(chain([4, 5], { 1: { start: 0.5, end: 1.5 } }).shots)).toBe(6);
  });
});

describe('reorder', () => {
  it('a step earlier or later, never past an end', () => {
    const shots = chain([4, 4, 4]).shots;
    expect(steppedPosition(shots, 'm_2', -1)).toBe(1);
    expect(steppedPosition(shots, 'm_2', 1)).toBe(3);
    expect(steppedPosition(shots, 'm_1', -1)).toBeNull();
    expect(steppedPosition(shots, 'm_3', 1)).toBeNull();
    expect(steppedPosition(shots, 'nope', 1)).toBeNull();
  });
  it('a moved shot takes its place, the others close up and are numbered again (as main stores it)', () => {
    const c = chain([4, 4, 4]);
    expect(order(movedChain(c, 'm_3', 1))).toEqual([
      ['m_3', 1],
      ['m_1', 2],
      ['m_2', 3],
    ]);
    expect(order(movedChain(c, 'm_1', 99))).toEqual([
      ['m_2', 1],
      ['m_3', 2],
      ['m_1', 3],
    ]);
    // Parents (the lineage) and trims go with their shots.
    const moved = movedChain(chain([4, 4], { 2: { start: 1, end: 2 } }), 'm_2', 1);
    expect(moved.shots[0]).toMatchObject({ itemId: 'm_2', parentId: 'm_1', trim: { start: 1, end: 2 } });
    expect(movedChain(c, 'nope', 1)).toBe(c);
  });
});

describe('trim handles', () => {
  const whole = { start: 0, end: 4 };
  it('stay inside the clip and at least 0.2 s apart, in tenths', () => {
    expect(movedTrim(4, whole, 'start', -1)).toEqual({ start: 0, end: 4 });
    expect(movedTrim(4, whole, 'start', 3.95)).toEqual({ start: 3.8, end: 4 });
    expect(movedTrim(4, whole, 'end', 9)).toEqual({ start: 0, end: 4 });
    expect(movedTrim(4, { start: 1, end: 4 }, 'end', 0.5)).toEqual({ start: 1, end: 1.2 });
    expect(movedTrim(4, whole, 'start', 1.234)).toEqual({ start: 1.2, end: 4 });
  });
  it('a drag moves a handle by the clip’s seconds per pixel', () => {
    // 200 px for 4 s: 50 px is 1 s.
    expect(draggedTrim(4, 200, whole, 'start', 50)).toEqual({ start: 1, end: 4 });
    expect(draggedTrim(4, 200, { start: 1, end: 4 }, 'end', -100)).toEqual({ start: 1, end: 2 });
    expect(draggedTrim(4, 0, whole, 'end', -100)).toBe(whole);
  });
  it('keys: arrows a tenth, Shift a second, Home and End the clip’s ends; other keys nothing', () => {
    expect(keyedTrim(4, whole, 'start', 'ArrowRight', false)).toEqual({ start: 0.1, end: 4 });
    expect(keyedTrim(4, whole, 'end', 'ArrowLeft', true)).toEqual({ start: 0, end: 3 });
    expect(keyedTrim(4, { start: 2, end: 3 }, 'start', 'Home', false)).toEqual({ start: 0, end: 3 });
    expect(keyedTrim(4, { start: 2, end: 3 }, 'end', 'End', false)).toEqual({ start: 2, end: 4 });
    expect(keyedTrim(4, whole, 'end', 'a', false)).toBeNull();
  });
  it('stores the in and out points, or none when they are the clip’s own ends', () => {
    expect(trimToStore(4, { start: 0.5, end: 3 })).toEqual({ start: 0.5, end: 3 });
    expect(trimToStore(4, { start: 0, end: 4 })).toBeNull();
    expect(trimToStore(4, { start: 0.02, end: 3.98 })).toBeNull();
  });
});
