import { memo, useEffect, useState } from 'react';
import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { LIBRARY_DRAG_TYPE } from '../../../lib/drag.ts';
import { formatElapsed } from '../../../lib/format.ts';
import { useModels } from '../../../stores/models/index.ts';
import { modelName, providerName } from '../../../stores/models/selectors.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { retentionView } from '../../../stores/library/retention.ts';
import { dragPayload, isInput, previewUrl, tilePrice, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { showOnStage } from './sendToCompose.ts';

/** A pointer resting this long starts hover-play; one passing over the grid starts nothing. */
const HOVER_PLAY_MS = 250;

export interface TileProps {
  entry: LibraryItem;
  index: number;
  /** All the items the grid holds: the tile's place among them for assistive technology (the grid is virtual). */
  setSize?: number;
  /** A stack's cover: how many takes it holds and whether it is open (stores/library/layout.ts). */
  stack?: { takes: number; expanded: boolean } | null;
  /** A variation shown in its open stack. */
  variation?: boolean;
  selected: boolean;
  open: boolean;
  focused: boolean;
  now: number;
  onActivate: (index: number, e: React.MouseEvent) => void;
  /**
   * Where the grid's row places it: numbers, not a style object, so that a scroll's re-render of
   * the grid passes equal props and the memoised tile skips its render (docs/benchmarks.md).
   */
  gridRow?: number;
  gridColumn?: number;
}

/** What an option's name adds for a stack (its count, open or not) and for a variation in an open one. */
function stackLabel(stack: TileProps['stack'], variation: boolean): string {
  if (stack) return ` — stack of ${stack.takes} takes, ${stack.expanded ? 'open' : 'closed'}`;
  return variation ? ' — variation' : '';
}

/**
 * A stack's count, which opens it in place or closes it. Not a button: the tile is a listbox
 * option, which may hold nothing focusable; the keyboard's way is the detail panel's
 * "Show variations" button, and the option's name says the count and whether it is open.
 */
function StackToggle({ id, stack }: { id: string; stack: NonNullable<TileProps['stack']> }) {
  return (
    <span
      className="badge tile-stack-count"
      data-testid="stack-toggle"
      title={stack.expanded ? 'Close the stack' : `Open the stack: ${stack.takes} takes`}
      onClick={(e) => {
        e.stopPropagation();
        useLibrary.getState().toggleStack(id);
      }}
      onDoubleClick={(e) => e.stopPropagation()}
    >
      {stack.expanded ? '▾' : '▸'} {stack.takes} takes
    </span>
  );
}

/** Kept lean: the grid's DOM budget is 400 nodes for the whole window. */
export const LibraryTile = memo(function LibraryTile({
  entry,
  index,
  setSize,
  stack = null,
  variation = false,
  selected,
  open,
  focused,
  now,
  onActivate,
  gridRow,
  gridColumn,
}: TileProps) {
  const { item } = entry;
  const thumb = thumbnailUrl(entry);
  const retention = retentionView(entry, now);
  // Someone else's public item: when their copy goes is not this creator's business.
  const feed = useLibrary((s) => s.filters.publicFeed);
  const model = useModels((s) => modelName(s.catalog, item.model));
  const provider = useModels((s) => providerName(s.providers, { id: item.provider, name: item.providerName }));
  const input = isInput(item);
  const price = tilePrice(item);
  // Hover-play: the small preview rendition, only while the pointer rests on the tile (docs/workflows.md).
  const [hovered, setHovered] = useState(false);
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    if (!hovered || item.media !== 'video') return undefined;
    const t = setTimeout(() => setPlaying(true), HOVER_PLAY_MS);
    return () => {
      clearTimeout(t);
      setPlaying(false);
    };
  }, [hovered, item.media]);
  return (
    <div
      role="option"
      id={`tile-${index}`}
      aria-selected={selected}
      aria-setsize={setSize}
      aria-posinset={index + 1}
      aria-label={`${item.media === 'video' ? 'Video' : 'Image'}: ${input ? 'uploaded input' : item.prompt}${stackLabel(stack, variation)}`}
      tabIndex={focused ? 0 : -1}
      style={gridColumn === undefined ? undefined : { gridRow, gridColumn }}
      className={`tile${open ? ' open' : ''}${stack && !stack.expanded ? ' tile-stack' : ''}${variation ? ' tile-variation' : ''}`}
      draggable
      onDragStart={(e) => {
        e.dataTransfer.setData(LIBRARY_DRAG_TYPE, JSON.stringify(dragPayload(entry)));
        e.dataTransfer.effectAllowed = 'copy';
      }}
      onClick={(e) => onActivate(index, e)}
      // Opening a take (a double click) puts it on the canvas's stage (docs/workflows.md, "The Library").
      onDoubleClick={() => showOnStage(entry)}
      onPointerEnter={() => setHovered(true)}
      onPointerLeave={() => setHovered(false)}
    >
      {thumb ? (
        <img
          className="tile-thumb"
          src={thumb}
          alt=""
          loading="lazy"
          decoding="async"
          draggable={false}
          onError={(e) => (e.currentTarget.style.visibility = 'hidden')}
        />
      ) : (
        <div className="tile-thumb" />
      )}
      {playing && (
        <video
          className="tile-thumb tile-hover-play"
          src={previewUrl(entry)}
          poster={thumb ?? undefined}
          autoPlay
          muted
          loop
          playsInline
          aria-hidden="true"
          data-testid="hover-play"
        />
      )}
      <div className="tile-badges">
        <span className="badge">{item.media === 'video' ? formatElapsed(item.duration) : item.size}</span>
        {entry.chain && (
          <span className="badge badge-accent" title="Part of a shot chain">
            Shot {entry.chain.position}/{entry.chain.length}
          </span>
        )}
        {!feed && (
          <span
            className={`badge${retention.tone === 'info' ? '' : ` badge-${retention.tone}`}`}
            data-testid="retention"
            title={retention.badge}
          >
            {retention.badge}
          </span>
        )}
      </div>
      <span className="badge tile-price" data-testid="tile-price" title={price.title}>
        {price.text}
      </span>
      {stack && <StackToggle id={item.id} stack={stack} />}
      {variation && <span className="badge tile-variation-badge">Variation</span>}
      <div className="tile-info">
        <span className="tile-prompt">
          {entry.favourite ? '★ ' : ''}
          {input ? `Uploaded ${item.media === 'video' ? 'clip' : 'image'}` : item.prompt}
        </span>
        <span className="tile-sub">{input ? `Input · ${item.size}` : `${model} · ${provider}`}</span>
      </div>
    </div>
  );
});
