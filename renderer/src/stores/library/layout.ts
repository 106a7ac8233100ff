import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { groupLibrary, type LibraryGroup, type LibrarySession } from './groups.ts';
import type { Stack } from './stacks.ts';

/** One tile of the grid, at its place in the order the grid shows (`index`). */
export interface GridTile {
  entry: LibraryItem;
  index: number;
  /** A stack's cover: how many takes it holds (itself included) and whether it is open. */
  stack: { takes: number; expanded: boolean } | null;
  /** A variation shown in its open stack, right after its cover. */
  variation: boolean;
}

/**
 * What the grid shows, before it knows its width: a session's header, then its tiles in runs: a
 * prompt group's (under its header) or takes that stand alone. `gridRows` packs them into rows.
 */
export type GridBlock =
  | { kind: 'session'; key: string; session: LibrarySession }
  | { kind: 'tiles'; key: string; group: LibraryGroup | null; tiles: GridTile[] };

/** Tiles side by side in a row, from `column`: a group's header stands over them on its first row. */
export interface GridSegment {
  key: string;
  column: number;
  /** The group whose header this segment carries: only on the group's first row. */
  head: LibraryGroup | null;
  tiles: GridTile[];
}

export type GridRow =
  | { kind: 'session'; key: string; session: LibrarySession }
  /** `headed`: a segment in it carries a group header, so the row has the header's strip on top. */
  | { kind: 'tiles'; key: string; headed: boolean; segments: GridSegment[] };

export interface LibraryView {
  /** The tiles in the order the grid shows them: what clicks, ranges and arrow keys count in. */
  order: LibraryItem[];
  blocks: GridBlock[];
  /** Each stack's cover (by id) → how many variations it holds: what the detail's Show/Hide says. */
  stacks: Record<string, number>;
}

/** A prompt group gets a header when it gathers more than one tile; a take alone (or one stack) flows with the session's others. */
export function headedGroup(group: LibraryGroup): boolean {
  return group.stacks.length >= 2;
}

interface Building {
  order: LibraryItem[];
  stacks: Record<string, number>;
  expanded: Readonly<Record<string, true>>;
}

function stackTiles(stack: Stack<LibraryItem>, { order, stacks, expanded }: Building) {
  const tiles: GridTile[] = [];
  if (stack.variations.length > 0) stacks[stack.cover.item.id] = stack.variations.length;
  const open = stack.variations.length > 0 && expanded[stack.cover.item.id] === true;
  const add = (entry: LibraryItem, tile: Omit<GridTile, 'entry' | 'index'>) => {
    tiles.push({ entry, index: order.length, ...tile });
    order.push(entry);
  };
  add(stack.cover, {
    stack: stack.variations.length > 0 ? { takes: stack.variations.length + 1, expanded: open } : null,
    variation: false,
  });
  if (open) for (const v of stack.variations) add(v, { stack: null, variation: true });
  return tiles;
}

function sessionBlocks(session: LibrarySession, building: Building): GridBlock[] {
  const blocks: GridBlock[] = [{ kind: 'session', key: `s:${session.key}`, session }];
  for (const group of session.groups) {
    const tiles = group.stacks.flatMap((stack) => stackTiles(stack, building));
    blocks.push({ kind: 'tiles', key: `t:${group.key}`, group: headedGroup(group) ? group : null, tiles });
  }
  return blocks;
}

/**
 * The loaded items as the grid shows them. `grouped`: by session and prompt, variations in stacks
 * (`expanded` names the open ones by their cover's id); otherwise (the public feed, other people's
 * takes) one plain run in the query's order.
 */
export function libraryView(
  items: readonly LibraryItem[],
  grouped: boolean,
  expanded: Readonly<Record<string, true>>,
): LibraryView {
  if (!grouped) {
    const tiles = items.map((entry, index) => ({ entry, index, stack: null, variation: false }));
    const blocks: GridBlock[] = tiles.length > 0 ? [{ kind: 'tiles', key: 'all', group: null, tiles }] : [];
    return { order: [...items], blocks, stacks: {} };
  }
  const building: Building = { order: [], stacks: {}, expanded };
  const blocks = groupLibrary(items).flatMap((session) => sessionBlocks(session, building));
  return { order: building.order, blocks, stacks: building.stacks };
}

type TileRow = Extract<GridRow, { kind: 'tiles' }>;

/**
 * The blocks packed into rows `columns` tiles wide. A session's header is a row of its own. Within
 * a session, runs sit side by side while they fit: a group starts a new row when it would not fit
 * in what is left of the current one (one wider than a row takes whole rows, its header on the
 * first), and takes that stand alone fill in. So small groups do not leave most of a row empty.
 */
export function gridRows(blocks: readonly GridBlock[], columns: number): GridRow[] {
  const rows: GridRow[] = [];
  let row: TileRow | null = null;
  let used = 0;
  const newRow = (key: string): TileRow => {
    row = { kind: 'tiles', key, headed: false, segments: [] };
    rows.push(row);
    used = 0;
    return row;
  };
  for (const block of blocks) {
    if (block.kind === 'session') {
      rows.push(block);
      row = null;
      continue;
    }
    const n = block.tiles.length;
    const fits = row !== null && (block.group ? (n <= columns ? used + n <= columns : used === 0) : used < columns);
    let current: TileRow = fits && row ? row : newRow(`${block.key}:0`);
    for (let at = 0; at < n;) {
      if (used === columns) current = newRow(`${block.key}:${at}`);
      const take = Math.min(columns - used, n - at);
      const head = at === 0 ? block.group : null;
      current.segments.push({ key: `${block.key}:${at}`, column: used, head, tiles: block.tiles.slice(at, at + take) });
      if (head) current.headed = true;
      used += take;
      at += take;
    }
  }
  return rows;
}

/** For each tile of the order, the row it is on. */
export function rowOfTiles(rows: readonly GridRow[], tiles: number): number[] {
  const rowOf = new Array<number>(tiles).fill(0);
  rows.forEach((row, r) => {
    if (row.kind === 'tiles')
      for (const segment of row.segments) for (const tile of segment.tiles) rowOf[tile.index] = r;
  });
  return rowOf;
}

/** A row's tiles with the column each stands in. */
function placed(row: TileRow): { index: number; column: number }[] {
  return row.segments.flatMap((s) => s.tiles.map((t, i) => ({ index: t.index, column: s.column + i })));
}

/**
 * Arrow keys up and down: the tile nearest the same column in the next row of tiles up or down,
 * over the headers between. The same tile when there is none.
 */
export function verticalNeighbour(rows: readonly GridRow[], rowOf: readonly number[], index: number, step: 1 | -1) {
  const r = rowOf[index];
  const row = r === undefined ? undefined : rows[r];
  if (r === undefined || row?.kind !== 'tiles') return index;
  const column = placed(row).find((t) => t.index === index)?.column ?? 0;
  for (let next = r + step; next >= 0 && next < rows.length; next += step) {
    const candidate = rows[next]!;
    if (candidate.kind !== 'tiles') continue;
    const tiles = placed(candidate);
    let best = tiles[0]!;
    for (const t of tiles) if (Math.abs(t.column - column) < Math.abs(best.column - column)) best = t;
    return best.index;
  }
  return index;
}
