import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useLibrary } from '../../../stores/library/index.ts';

import { LibraryTile } from './LibraryTile.tsx';

const MIN_TILE = 220;
const GAP = 12;
/** Prompt and model lines under the 16:9 thumbnail. */
const INFO_HEIGHT = 50;

function columnsFor(width: number): number {
  return Math.max(1, Math.floor((width + GAP) / (MIN_TILE + GAP)));
}

export function LibraryGrid({ now }: { now: number }) {
  const items = useLibrary((s) => s.items);
  const total = useLibrary((s) => s.total);
  const selected = useLibrary((s) => s.selected);
  const detailId = useLibrary((s) => s.detailId);
  const scroller = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [focusIndex, setFocusIndex] = useState(0);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return undefined;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(([entry]) => setWidth(entry?.contentRect.width ?? 0));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const columns = columnsFor(width || MIN_TILE);
  const tileWidth = width > 0 ? (width - GAP * (columns - 1)) / columns : MIN_TILE;
  const rowHeight = Math.round((tileWidth * 9) / 16 + INFO_HEIGHT + GAP);
  const rowCount = Math.ceil(total / columns);

  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer is read during render by design
  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 1,
  });
  useEffect(() => {
    virtualizer.measure();
  }, [rowHeight, virtualizer]);

  const rows = virtualizer.getVirtualItems();
  const lastRow = rows.length > 0 ? rows[rows.length - 1]!.index : 0;
  const lastNeeded = Math.min(total - 1, (lastRow + 1) * columns - 1);

  // Load pages up to what is on screen (and a little beyond).
  useEffect(() => {
    if (lastNeeded >= items.length - columns * 2) void useLibrary.getState().ensureLoaded(lastNeeded + columns * 4);
  }, [lastNeeded, items.length, columns]);

  const onActivate = useCallback((index: number, e: React.MouseEvent) => {
    setFocusIndex(index);
    useLibrary.getState().select(index, { additive: e.ctrlKey || e.metaKey, range: e.shiftKey });
  }, []);

  const moveFocus = (next: number) => {
    const clamped = Math.max(0, Math.min(total - 1, next));
    setFocusIndex(clamped);
    virtualizer.scrollToIndex(Math.floor(clamped / columns), { align: 'auto' });
    requestAnimationFrame(() => document.getElementById(`tile-${clamped}`)?.focus());
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    const lib = useLibrary.getState();
    const steps: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns };
    const step = steps[e.key];
    if (step !== undefined) {
      e.preventDefault();
      moveFocus(focusIndex + step);
      if (e.shiftKey) lib.select(Math.max(0, Math.min(total - 1, focusIndex + step)), { range: true });
    } else if (e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      moveFocus(e.key === 'Home' ? 0 : total - 1);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      lib.select(focusIndex);
    } else if (e.key === ' ') {
      e.preventDefault();
      const id = lib.items[focusIndex]?.item.id;
      if (id) lib.toggleSelected(id);
    } else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      lib.selectAll();
    } else if (e.key === 'Escape') {
      lib.clearSelection();
    }
  };

  return (
    <div
      ref={scroller}
      className="grid-scroll"
      role="listbox"
      aria-label="Library items"
      aria-multiselectable="true"
      tabIndex={items.length === 0 ? 0 : -1}
      onKeyDown={onKeyDown}
      data-testid="library-grid"
    >
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
        {rows.map((row) => (
          <div
            key={row.key}
            className="grid-row"
            style={{
              top: row.start,
              height: rowHeight - GAP,
              gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))`,
            }}
          >
            {Array.from({ length: columns }, (_, c) => {
              const index = row.index * columns + c;
              if (index >= total) return null;
              const entry = items[index];
              if (!entry) return <div key={c} className="skeleton" aria-hidden="true" />;
              return (
                <LibraryTile
                  key={entry.item.id}
                  entry={entry}
                  index={index}
                  setSize={total}
                  selected={selected[entry.item.id] === true}
                  open={detailId === entry.item.id}
                  focused={index === focusIndex}
                  now={now}
                  onActivate={onActivate}
                />
              );
            })}
          </div>
        ))}
      </div>
    </div>
  );
}
