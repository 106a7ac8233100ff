import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useLibrary } from '../../../stores/library/index.ts';
import { gridRows, rowOfTiles, verticalNeighbour, type GridRow } from '../../../stores/library/layout.ts';
import { gridView } from '../../../stores/library/view.ts';
import { SessionHead } from './GridHeaders.tsx';
import { TileRow } from './TileRow.tsx';

const MIN_TILE = 220;
const GAP = 12;
/** Prompt and model lines under the 16:9 thumbnail. */
const INFO_HEIGHT = 50;
/** A session's header row (gap below included), and the strip a prompt group's header adds on top of a row. */
const SESSION_HEAD = 42;
const GROUP_HEAD = 32;

function columnsFor(width: number): number {
  return Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
}

function useWidth(scroller: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return undefined;
    // The observer's first call (on observe) gives the starting width.
    const ro = new ResizeObserver(([entry]) => setWidth(entry?.contentRect.width ?? 0));
    ro.observe(el);
    return () => ro.disconnect();
  }, [scroller]);
  return width;
}

/** Where an arrow key, Home or End moves the focus to (a tile's index), or null for another key. */
function keyTarget(
  key: string,
  from: number,
  grid: { rows: readonly GridRow[]; rowOf: readonly number[]; tiles: number },
): number | null {
  if (key === 'ArrowRight') return from + 1;
  if (key === 'ArrowLeft') return from - 1;
  if (key === 'ArrowDown') return verticalNeighbour(grid.rows, grid.rowOf, from, 1);
  if (key === 'ArrowUp') return verticalNeighbour(grid.rows, grid.rowOf, from, -1);
  if (key === 'Home') return 0;
  if (key === 'End') return grid.tiles - 1;
  return null;
}

/**
 * The Library's grid (docs/workflows.md, "The Library"): the loaded takes by session and prompt,
 * variations in stacks, then skeleton rows for what is not loaded yet. Virtual: only the rows on
 * screen are in the DOM, headers being rows of their own height, so 10,000 takes stay smooth.
 */
export function LibraryGrid({ now }: { now: number }) {
  const loaded = useLibrary((s) => s.items.length);
  const total = useLibrary((s) => s.total);
  const view = useLibrary(gridView);
  const selected = useLibrary((s) => s.selected);
  const detailId = useLibrary((s) => s.detailId);
  const scroller = useRef<HTMLDivElement>(null);
  const [focusIndex, setFocusIndex] = useState(0);
  const width = useWidth(scroller);

  const columns = columnsFor(width || MIN_TILE);
  const tileWidth = width > 0 ? (width - GAP * (columns - 1)) / columns : MIN_TILE;
  const rowHeight = Math.round((tileWidth * 9) / 16 + INFO_HEIGHT + GAP);
  const rows = useMemo(() => gridRows(view.blocks, columns), [view, columns]);
  const rowOf = useMemo(() => rowOfTiles(rows, view.order.length), [rows, view]);
  const notLoaded = Math.max(0, total - loaded);
  const rowCount = rows.length + Math.ceil(notLoaded / columns);
  const tiles = view.order.length;
  const setSize = tiles + notLoaded;

  const sizeOf = useCallback(
    (r: number) => {
      const row = rows[r];
      if (row?.kind === 'session') return SESSION_HEAD;
      return row?.headed ? rowHeight + GROUP_HEAD : rowHeight;
    },
    [rows, rowHeight],
  );
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer is read during render by design
  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scroller.current,
    estimateSize: sizeOf,
    overscan: 1,
  });
  useEffect(() => {
    virtualizer.measure();
  }, [sizeOf, virtualizer]);

  const virtualRows = virtualizer.getVirtualItems();
  const lastRow = virtualRows.length > 0 ? virtualRows[virtualRows.length - 1]!.index : 0;

  // Load pages up to what is on screen (and a little beyond): rows past the loaded ones are
  // skeletons standing for `columns` items each.
  useEffect(() => {
    if (loaded >= total || lastRow < rows.length - 4) return;
    const beyond = Math.max(0, lastRow - rows.length + 1) * columns;
    void useLibrary.getState().ensureLoaded(loaded + beyond + columns * 4);
  }, [lastRow, rows.length, loaded, total, columns]);

  const onActivate = useCallback((index: number, e: React.MouseEvent) => {
    setFocusIndex(index);
    useLibrary.getState().select(index, { additive: e.ctrlKey || e.metaKey, range: e.shiftKey });
  }, []);

  const moveFocus = (next: number) => {
    const clamped = Math.max(0, Math.min(tiles - 1, next));
    setFocusIndex(clamped);
    virtualizer.scrollToIndex(rowOf[clamped] ?? 0, { align: 'auto' });
    requestAnimationFrame(() => document.getElementById(`tile-${clamped}`)?.focus());
    return clamped;
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    const lib = useLibrary.getState();
    const target = keyTarget(e.key, focusIndex, { rows, rowOf, tiles });
    if (target !== null) {
      e.preventDefault();
      const moved = moveFocus(target);
      if (e.shiftKey && e.key.startsWith('Arrow')) lib.select(moved, { range: true });
      // End with pages still to come: the last row, so they load (as scrolling there would).
      if (e.key === 'End' && loaded < total) virtualizer.scrollToIndex(rowCount - 1, { align: 'end' });
    } else if (e.key === 'Enter') {
      e.preventDefault();
      lib.select(focusIndex);
    } else if (e.key === ' ') {
      e.preventDefault();
      const id = view.order[focusIndex]?.item.id;
      if (id) lib.toggleSelected(id);
    } else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      lib.selectAll();
    } else if (e.key === 'Escape') {
      lib.clearSelection();
    }
  };

  const renderRow = (row: GridRow | undefined, r: number) => {
    if (row?.kind === 'session') return <SessionHead session={row.session} now={now} />;
    if (row?.kind === 'tiles')
      return (
        <TileRow
          row={row}
          setSize={setSize}
          selected={selected}
          detailId={detailId}
          focusIndex={focusIndex}
          now={now}
          onActivate={onActivate}
        />
      );
    return Array.from({ length: Math.min(columns, notLoaded - (r - rows.length) * columns) }, (_, c) => (
      <div key={c} className="skeleton" aria-hidden="true" />
    ));
  };

  return (
    <div
      ref={scroller}
      className="grid-scroll"
      role="listbox"
      aria-label="Library items"
      aria-multiselectable="true"
      tabIndex={tiles === 0 ? 0 : -1}
      onKeyDown={onKeyDown}
      data-testid="library-grid"
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
        {virtualRows.map((v) => {
          const row = rows[v.index];
          const tileRow = row === undefined || row.kind === 'tiles';
          const headed = row?.kind === 'tiles' && row.headed;
          return (
            <div
              key={row?.key ?? `more:${v.index}`}
              className={tileRow ? 'grid-row' : `grid-row grid-head-row${v.index === 0 ? ' grid-first' : ''}`}
              style={{
                top: v.start,
                height: sizeOf(v.index) - (tileRow ? GAP : 0),
                ...(tileRow ? { gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))` } : {}),
                ...(headed ? { gridTemplateRows: `${GROUP_HEAD}px minmax(0, 1fr)`, rowGap: 0 } : {}),
              }}
            >
              {renderRow(row, v.index)}
            </div>
          );
        })}
      </div>
    </div>
  );
}
