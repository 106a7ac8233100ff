import { beforeEach, describe, expect, it } from 'vitest';
import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { groupLibrary, SESSION_GAP_MS, sessionDay } from '../../../../renderer/src/stores/library/groups.ts';
import {
  gridRows,
  libraryView,
  rowOfTiles,
  verticalNeighbour,
  type GridRow,
} from '../../../../renderer/src/stores/library/layout.ts';
import { stackVariations } from '../../../../renderer/src/stores/library/stacks.ts';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { selectedIds } from '../../../../renderer/src/stores/library/selectors.ts';
import { installFakeIpc, libraryItem } from '../fixtures.ts';

const T0 = Date.parse('2026-03-02T15:00:00.000Z');
const MIN = 60_000;

/** A take `minutesAgo` before T0, with its prompt, price and source. */
function take(id: number, minutesAgo: number, prompt: string, over: Partial<LibraryItem['item']> = {}): LibraryItem {
  const entry = libraryItem(id);
  return {
    ...entry,
    item: { ...entry.item, prompt, price: 0.1, createdAt: new Date(T0 - minutesAgo * MIN).toISOString(), ...over },
  };
}

const ids = (list: readonly LibraryItem[]) => list.map((e) => e.item.id);

describe('stackVariations (the Library and the filmstrip)', () => {
  type T = { id: string | null; source: string | null };
  const keys = { id: (t: T) => t.id, sourceOf: (t: T) => t.source };
  const t = (id: string | null, source: string | null = null): T => ({ id, source });

  it('puts variations under their source, at the source’s place, and keeps an orphan on its own', () => {
    const list = [t('v2', 's'), t('x'), t(null, 's'), t('orphan', 'gone'), t('s'), t('v1', 's')];
    const stacks = stackVariations(list, keys);
    expect(stacks.map((s) => s.cover.id)).toEqual(['x', 'orphan', 's']);
    expect(stacks[2]!.variations).toEqual([list[0], list[2], list[5]]);
  });
  it('a variation of a variation goes under the first source; a loop in bad data ends', () => {
    const stacks = stackVariations([t('vv', 'v'), t('v', 's'), t('s')], keys);
    expect(stacks.map((s) => [s.cover.id, s.variations.map((v) => v.id)])).toEqual([['s', ['vv', 'v']]]);
    const loop = stackVariations([t('a', 'b'), t('b', 'a')], keys);
    expect(loop.flatMap((s) => [s.cover, ...s.variations])).toHaveLength(2);
  });
});

describe('groupLibrary', () => {
  it('cuts sessions at a gap longer than two hours and groups each by prompt, with a count and a total price', () => {
    const items = [
      take(1, 0, 'a fox'),
      take(2, 5, 'a lake'),
      take(3, 10, 'a fox'),
      take(4, 30, 'a fox', { price: undefined }),
      // More than two hours before the one above: another session.
      take(5, 30 + SESSION_GAP_MS / MIN + 1, 'a fox'),
    ];
    const sessions = groupLibrary(items);
    expect(sessions).toHaveLength(2);
    const [today, earlier] = sessions;
    expect(today!.groups.map((g) => [g.prompt, g.takes])).toEqual([
      ['a fox', 3],
      ['a lake', 1],
    ]);
    expect(today!.groups[0]!.price).toBeCloseTo(0.2);
    expect(today!.groups[0]!.unpriced).toBe(1);
    expect(today!.takes).toBe(4);
    expect(today!.price).toBeCloseTo(0.3);
    expect(today!.newest).toBe(T0);
    expect(today!.oldest).toBe(T0 - 30 * MIN);
    expect(ids(earlier!.groups[0]!.stacks.map((s) => s.cover))).toEqual(['m_5']);
  });
  it('stacks variations of one source in its group, counted as takes; an input groups apart, without a price', () => {
    const items = [
      take(2, 1, 'a fox', { variationOf: 'm_1' }),
      take(3, 1, 'a fox', { variationOf: 'm_1' }),
      take(1, 2, 'a fox'),
      take(9, 3, '', { model: 'upload/file', price: undefined }),
    ];
    const [session] = groupLibrary(items);
    const [fox, inputs] = session!.groups;
    expect(fox!.stacks).toHaveLength(1);
    expect(fox!.stacks[0]!.cover.item.id).toBe('m_1');
    expect(ids(fox!.stacks[0]!.variations)).toEqual(['m_2', 'm_3']);
    expect(fox!.takes).toBe(3);
    expect(inputs!.input).toBe(true);
    expect(inputs!.price).toBeNull();
  });
  it('a new take on top keeps the keys of its session and group, so the grid does not mount their rows again', () => {
    const before = groupLibrary([take(2, 5, 'a fox'), take(1, 10, 'a fox')]);
    const after = groupLibrary([take(3, 0, 'a fox'), take(2, 5, 'a fox'), take(1, 10, 'a fox')]);
    expect(after[0]!.key).toBe(before[0]!.key);
    expect(after[0]!.groups[0]!.key).toBe(before[0]!.groups[0]!.key);
  });
  it('works the same oldest first', () => {
    const items = [take(1, 300, 'a'), take(2, 290, 'b'), take(3, 280, 'a'), take(4, 0, 'a')];
    const sessions = groupLibrary(items);
    expect(sessions.map((s) => s.groups.map((g) => [g.prompt, g.takes]))).toEqual([
      [
        ['a', 2],
        ['b', 1],
      ],
      [['a', 1]],
    ]);
  });
  it('names the day: today, yesterday, else the date', () => {
    const now = new Date(2026, 2, 2, 15, 0).getTime();
    expect(sessionDay(new Date(2026, 2, 2, 0, 5).getTime(), now)).toBe('Today');
    expect(sessionDay(new Date(2026, 2, 1, 23, 55).getTime(), now)).toBe('Yesterday');
    expect(sessionDay(new Date(2026, 1, 20, 12, 0).getTime(), now)).toMatch(/2026/);
  });
});

/** Each row as text: "session", or its segments ("^" marks one under a group's header). */
const kinds = (rows: readonly GridRow[]) =>
  rows.map((r) =>
    r.kind === 'tiles'
      ? r.segments.map((s) => `${s.head ? '^' : ''}${s.tiles.map((t) => t.entry.item.id).join(',')}`).join('|')
      : r.kind,
  );
const tilesOf = (rows: readonly GridRow[]) =>
  rows.flatMap((r) => (r.kind === 'tiles' ? r.segments.flatMap((s) => s.tiles) : []));

describe('the grid’s layout', () => {
  const items = [
    take(5, 0, 'a lake'),
    take(2, 1, 'a fox', { variationOf: 'm_1' }),
    take(3, 1, 'a fox', { variationOf: 'm_1' }),
    take(1, 2, 'a fox'),
    take(4, 3, 'a fox'),
    take(6, 4, 'a tree'),
  ];

  it('a session header, a header over a prompt with several tiles, a closed stack as one tile, side by side while they fit', () => {
    const view = libraryView(items, true, {});
    const rows = gridRows(view.blocks, 4);
    expect(kinds(rows)).toEqual(['session', 'm_5|^m_1,m_4|m_6']);
    expect(rows[1]!.kind === 'tiles' && rows[1]!.headed).toBe(true);
    const stack = tilesOf(rows).find((t) => t.entry.item.id === 'm_1');
    expect(stack?.stack).toEqual({ takes: 3, expanded: false });
    expect(ids(view.order)).toEqual(['m_5', 'm_1', 'm_4', 'm_6']);
  });
  it('an open stack shows its variations in place, after its cover, and the rows wrap', () => {
    const view = libraryView(items, true, { m_1: true });
    expect(ids(view.order)).toEqual(['m_5', 'm_1', 'm_2', 'm_3', 'm_4', 'm_6']);
    const rows = gridRows(view.blocks, 3);
    // The open stack no longer fits beside m_5: a row of its own, its header on the first; the tree fills in.
    expect(kinds(rows)).toEqual(['session', 'm_5', '^m_1,m_2,m_3', 'm_4|m_6']);
    const tiles = tilesOf(rows);
    expect(tiles.map((t) => t.variation)).toEqual([false, false, true, true, false, false]);
    expect(tiles.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5]);
  });
  it('the public feed is one plain run in the query’s order', () => {
    const view = libraryView(items, false, {});
    expect(kinds(gridRows(view.blocks, 4))).toEqual(['m_5,m_2,m_3,m_1', 'm_4,m_6']);
  });
  it('arrow keys up and down go to the same column of the next row of tiles, over headers', () => {
    const view = libraryView(items, true, { m_1: true });
    const rows = gridRows(view.blocks, 3);
    const rowOf = rowOfTiles(rows, view.order.length);
    // m_5 (0) → down → m_1 (1); m_3 (3, third column) → down → m_6 (5, the nearest column); m_6 → down stays.
    expect(verticalNeighbour(rows, rowOf, 0, 1)).toBe(1);
    expect(verticalNeighbour(rows, rowOf, 3, 1)).toBe(5);
    expect(verticalNeighbour(rows, rowOf, 5, 1)).toBe(5);
    expect(verticalNeighbour(rows, rowOf, 2, -1)).toBe(0);
  });
  it('a group wider than a row takes whole rows, and one that does not fit what is left starts a new row', () => {
    const wide = [take(1, 0, 'a'), take(2, 1, 'b'), take(3, 2, 'b'), take(4, 3, 'b'), take(5, 4, 'c'), take(6, 5, 'c')];
    expect(kinds(gridRows(libraryView(wide, true, {}).blocks, 2))).toEqual([
      'session',
      'm_1',
      '^m_2,m_3',
      'm_4',
      '^m_5,m_6',
    ]);
    expect(kinds(gridRows(libraryView(wide, true, {}).blocks, 3))).toEqual([
      'session',
      'm_1',
      '^m_2,m_3,m_4',
      '^m_5,m_6',
    ]);
  });
  it('1,000 takes of one session with distinct prompts: one header, then rows of tiles', () => {
    const many = Array.from({ length: 1000 }, (_, i) => take(i, i, `prompt ${i}`));
    const rows = gridRows(libraryView(many, true, {}).blocks, 5);
    expect(rows).toHaveLength(201);
    expect(rows.filter((r) => r.kind !== 'tiles')).toHaveLength(1);
  });
});

describe('the store: stacks and selection in the grid’s order', () => {
  beforeEach(() => {
    installFakeIpc();
    useLibrary.getState().reset();
  });
  it('opens and closes a stack; Shift-click selects the tiles shown between the two clicks', () => {
    const items = [take(2, 1, 'a fox', { variationOf: 'm_1' }), take(1, 2, 'a fox'), take(4, 3, 'a fox')];
    useLibrary.setState({ items, total: 3, status: 'ready' });
    const lib = useLibrary.getState();
    lib.select(0);
    lib.select(1, { range: true });
    expect(selectedIds(useLibrary.getState()).sort()).toEqual(['m_1', 'm_4']);
    lib.toggleStack('m_1');
    expect(useLibrary.getState().expanded).toEqual({ m_1: true });
    lib.select(0);
    lib.select(2, { range: true });
    expect(selectedIds(useLibrary.getState()).sort()).toEqual(['m_1', 'm_2', 'm_4']);
    lib.toggleStack('m_1');
    expect(useLibrary.getState().expanded).toEqual({});
  });
});
