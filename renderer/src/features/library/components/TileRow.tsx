import { memo } from 'react';
import type { GridRow } from '../../../stores/library/layout.ts';
import { GroupHead } from './GridHeaders.tsx';
import { LibraryTile } from './LibraryTile.tsx';

export interface TileRowProps {
  row: Extract<GridRow, { kind: 'tiles' }>;
  setSize: number;
  selected: Readonly<Record<string, true>>;
  detailId: string | null;
  focusIndex: number;
  now: number;
  onActivate: (index: number, e: React.MouseEvent) => void;
}

/**
 * One row of tiles: its segments side by side, each in its own columns, with a group's header over
 * the first row of its tiles (stores/library/layout.ts packs them). A row with a header has the
 * header's strip on top; the other segments leave it empty. Memoised: a scroll re-renders the
 * grid for its new rows, and the rows already on screen keep their props.
 */
export const TileRow = memo(function TileRow({
  row,
  setSize,
  selected,
  detailId,
  focusIndex,
  now,
  onActivate,
}: TileRowProps) {
  const tileRow = row.headed ? 2 : 1;
  return row.segments.flatMap((segment) => [
    segment.head && (
      <GroupHead
        key={`head:${segment.key}`}
        group={segment.head}
        now={now}
        style={{ gridRow: 1, gridColumn: `${segment.column + 1} / span ${segment.tiles.length}` }}
      />
    ),
    ...segment.tiles.map((tile, i) => (
      <LibraryTile
        key={tile.entry.item.id}
        entry={tile.entry}
        index={tile.index}
        setSize={setSize}
        stack={tile.stack}
        variation={tile.variation}
        selected={selected[tile.entry.item.id] === true}
        open={detailId === tile.entry.item.id}
        focused={tile.index === focusIndex}
        now={now}
        onActivate={onActivate}
        gridRow={tileRow}
        gridColumn={segment.column + i + 1}
      />
    )),
  ]);
});
