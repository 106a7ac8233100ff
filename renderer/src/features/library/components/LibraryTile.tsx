import { memo, useEffect, useState } from 'react';
import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { LIBRARY_DRAG_TYPE, type LibraryDragPayload } from '../../../lib/drag.ts';
import { formatElapsed } from '../../../lib/format.ts';
import { useModels } from '../../../stores/models/index.ts';
import { modelName, providerName } from '../../../stores/models/selectors.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { retentionView } from '../../../stores/library/retention.ts';
import { isInput, previewUrl, tilePrice, thumbnailUrl } from '../../../stores/library/selectors.ts';

/** A pointer resting this long starts hover-play; one passing over the grid starts nothing. */
const HOVER_PLAY_MS = 250;

export interface TileProps {
  entry: LibraryItem;
  index: number;
  /** All the items the grid holds: the tile's place among them for assistive technology (the grid is virtual). */
  setSize?: number;
  selected: boolean;
  open: boolean;
  focused: boolean;
  now: number;
  onActivate: (index: number, e: React.MouseEvent) => void;
}

/** Kept lean: the grid's DOM budget is 400 nodes for the whole window. */
export const LibraryTile = memo(function LibraryTile({
  entry,
  index,
  setSize,
  selected,
  open,
  focused,
  now,
  onActivate,
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
      aria-label={`${item.media === 'video' ? 'Video' : 'Image'}: ${input ? 'uploaded input' : item.prompt}`}
      tabIndex={focused ? 0 : -1}
      className={`tile${open ? ' open' : ''}`}
      draggable
      onDragStart={(e) => {
        const payload: LibraryDragPayload = {
          id: item.id,
          name: item.prompt.slice(0, 60) || item.id,
          previewUrl: thumb ?? item.url,
        };
        e.dataTransfer.setData(LIBRARY_DRAG_TYPE, JSON.stringify(payload));
        e.dataTransfer.effectAllowed = 'copy';
      }}
      onClick={(e) => onActivate(index, e)}
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
          >
            {retention.badge}
          </span>
        )}
      </div>
      <span className="badge tile-price" data-testid="tile-price" title={price.title}>
        {price.text}
      </span>
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
