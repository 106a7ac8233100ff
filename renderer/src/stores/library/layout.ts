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
 * What the grid shows, before it knows its width: a session's header, a prompt group's header,
 * and runs of tiles that the grid cuts into rows of as many columns as fit.
 */
export type GridBlock =
  | { kind: 'session'; key: string; session: LibrarySession }
  | { kind: 'group'; key: string; group: LibraryGroup; session: LibrarySession }
  | { kind: 'tiles'; key: string; tiles: GridTile[] };

export type GridRow = GridBlock;

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

function sessionBlocks(session: LibrarySession, building: Building) {
  const blocks: GridBlock[] = [{ kind: 'session', key: `s:${session.key}`, session }];
  let loose: GridTile[] = [];
  const flush = () => {
    if (loose.length > 0) blocks.push({ kind: 'tiles', key: `t:${loose[0]!.entry.item.id}`, tiles: loose });
    loose = [];
  };
  for (const group of session.groups) {
    const tiles = group.stacks.flatMap((stack) => stackTiles(stack, building));
    if (!headedGroup(group)) {
      loose.push(...tiles);
      continue;
    }
    flush();
    blocks.push({ kind: 'group', key: `g:${group.key}`, group, session });
    blocks.push({ kind: 'tiles', key: `t:${tiles[0]!.entry.item.id}`, tiles });
  }
  flush();
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
    return { order: [...items], blocks: tiles.length > 0 ? [{ kind: 'tiles', key: 'all', tiles }] : [], stacks: {} };
  }
  const building: Building = { order: [], stacks: {}, expanded };
  const blocks = groupLibrary(items).flatMap((session) => sessionBlocks(session, building));
  return { order: building.order, blocks, stacks: building.stacks };
}

/** The blocks as rows `columns` tiles wide: a header is a row, a run of tiles wraps. */
export function gridRows(blocks: readonly GridBlock[], columns: number): GridRow[] {
  const rows: GridRow[] = [];
  for (const block of blocks) {
    if (block.kind !== 'tiles') {
      rows.push(block);
      continue;
    }
    for (let at = 0; at < block.tiles.length; at += columns)
      rows.push({ kind: 'tiles', key: `${block.key}:${at}`, tiles: block.tiles.slice(at, at + columns) });
  }
  return rows;
}

/** For each tile of the order, the row it is on. */
export function rowOfTiles(rows: readonly GridRow[], tiles: number): number[] {
  const rowOf = new Array<number>(tiles).fill(0);
  rows.forEach((row, r) => {
    if (row.kind === 'tiles') for (const tile of row.tiles) rowOf[tile.index] = r;
  });
  return rowOf;
}

/**
 * Arrow keys up and down: the tile in the same column of the next row of tiles up or down (or the
 * last one of a shorter row), over the headers between. The same tile when there is none.
 */
export function verticalNeighbour(rows: readonly GridRow[], rowOf: readonly number[], index: number, step: 1 | -1) {
  const r = rowOf[index];
  if (r === undefined) return index;
  const row = rows[r];
  if (row?.kind !== 'tiles') return index;
  const column = row.tiles.findIndex((t) => t.index === index);
  for (let next = r + step; next >= 0 && next < rows.length; next += step) {
    const candidate = rows[next]!;
    if (candidate.kind !== 'tiles') continue;
    return candidate.tiles[Math.min(column, candidate.tiles.length - 1)]!.index;
  }
  return index;
}
