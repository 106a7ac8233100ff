import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, useState, useSyncExternalStore } from 'react';
import { LIBRARY_DRAG_TYPE } from '../../../lib/drag.ts';
import { dragPayload, previewUrl, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { MAX_COMPARE, useStage, type Take } from '../../../stores/stage/index.ts';
import { stageTake } from '../../../stores/stage/takes.ts';

function takeName(take: Take): string {
  return take.item?.item.prompt ?? take.job?.request.prompt ?? take.key;
}

/** A take's small picture: its thumbnail, its video while hovered, or its state while it renders. */
function TakeThumb({ take }: { take: Take }) {
  const [hover, setHover] = useState(false);
  const entry = take.item;
  const thumb = entry ? thumbnailUrl(entry) : null;
  if (!entry) {
    const state = take.job?.state ?? 'queued';
    return <span className={`film-thumb film-pending film-${state}`}>{state === 'done' ? 'Loading' : state}</span>;
  }
  return (
    <span className="film-thumb" onMouseEnter={() => setHover(true)} onMouseLeave={() => setHover(false)}>
      {hover && entry.item.media === 'video' ? (
        // The small preview rendition, never the master (docs/workflows.md, "Preview renditions").
        <video src={previewUrl(entry)} muted loop autoPlay playsInline aria-hidden="true" />
      ) : thumb ? (
        <img src={thumb} alt="" loading="lazy" decoding="async" draggable={false} />
      ) : null}
    </span>
  );
}

function FilmTake({ take, onStage }: { take: Take; onStage: boolean }) {
  const compare = useStage((s) => s.compare);
  const name = takeName(take);
  const checked = take.itemId !== null && compare.includes(take.itemId);
  const variation = take.sourceId !== null;
  return (
    <li className={`film-take${onStage ? ' on-stage' : ''}${variation ? ' variation' : ''}`}>
      <button
        type="button"
        className="film-show"
        aria-label={`Show on stage: ${name}`}
        aria-current={onStage ? 'true' : undefined}
        draggable={take.item !== null}
        onDragStart={(e) => {
          if (!take.item) return;
          e.dataTransfer.setData(LIBRARY_DRAG_TYPE, JSON.stringify(dragPayload(take.item)));
          e.dataTransfer.effectAllowed = 'copy';
        }}
        onClick={() =>
          useStage
            .getState()
            .focusTake(take.itemId ? { kind: 'item', id: take.itemId } : { kind: 'job', id: take.jobId! })
        }
      >
        <TakeThumb take={take} />
        {variation && <span className="film-badge">Variation</span>}
      </button>
      {take.itemId && (
        <label className="film-pick">
          <input
            type="checkbox"
            checked={checked}
            disabled={!checked && compare.length >= MAX_COMPARE}
            onChange={() => useStage.getState().toggleCompare(take.itemId!)}
          />
          <span className="visually-hidden">Compare {name}</span>
        </label>
      )}
    </li>
  );
}

/**
 * The window height at which the filmstrip stands beside the stage as a column: the same query as
 * canvas-windows.css's, so the list virtualizes along the axis it scrolls on.
 */
const FILM_BESIDE_STAGE = '(max-height: 820px)';
const COLUMN_GAP = 8;
/** Columns mounted before the scroller is measured. */
const FIRST_COLUMNS = 12;

function subscribeBeside(onChange: () => void): () => void {
  const query = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia(FILM_BESIDE_STAGE) : null;
  query?.addEventListener('change', onChange);
  return () => query?.removeEventListener('change', onChange);
}

function besideStage(): boolean {
  return typeof window !== 'undefined' && window.matchMedia ? window.matchMedia(FILM_BESIDE_STAGE).matches : false;
}

/**
 * The takes' columns, mounted only around what is in view (docs/benchmarks.md): a long session's
 * 1,000 takes would otherwise be 1,000 columns of pictures in the page. Spacers before and after
 * keep the scroll length, so the columns stay in the normal flow (the strip takes its tallest
 * column's height, and a column its stack's).
 */
function FilmColumns({ takes, onStageKey }: { takes: Take[]; onStageKey: string | undefined }) {
  const scroller = useRef<HTMLDivElement>(null);
  const vertical = useSyncExternalStore(subscribeBeside, besideStage, () => false);
  // eslint-disable-next-line react-hooks/incompatible-library -- the virtualizer is read during render by design
  const virtualizer = useVirtualizer({
    count: takes.length,
    horizontal: !vertical,
    getScrollElement: () => scroller.current,
    estimateSize: () => (vertical ? 76 : 140),
    getItemKey: (index) => takes[index]!.key,
    gap: COLUMN_GAP,
    overscan: 4,
  });
  // Until the scroller has a size (its first frame; a page without layout) the list would mount
  // nothing: the newest few stand in, placed where the estimate puts them.
  const estimate = vertical ? 76 : 140;
  const inView = virtualizer.getVirtualItems();
  const columns =
    inView.length > 0
      ? inView
      : takes.slice(0, FIRST_COLUMNS).map((take, index) => ({
          index,
          key: take.key,
          start: index * (estimate + COLUMN_GAP),
          end: index * (estimate + COLUMN_GAP) + estimate,
        }));
  const before = columns[0]?.start ?? 0;
  const after = Math.max(0, virtualizer.getTotalSize() - (columns.at(-1)?.end ?? 0) - COLUMN_GAP);
  const spacer = (size: number) => (vertical ? { height: size } : { width: size });
  return (
    <div ref={scroller} className={`film-scroll${vertical ? ' vertical' : ''}`}>
      <ul className="film-columns">
        {before > 0 && <li className="film-spacer" aria-hidden="true" style={spacer(before - COLUMN_GAP)} />}
        {columns.map((column) => {
          const take = takes[column.index]!;
          return (
            <li key={column.key} className="film-column" data-index={column.index} ref={virtualizer.measureElement}>
              <ul className="film-stack" aria-label={`Takes of ${takeName(take)}`}>
                <FilmTake take={take} onStage={onStageKey === take.key} />
                {take.variations.map((v) => (
                  <FilmTake key={v.key} take={v} onStage={onStageKey === v.key} />
                ))}
              </ul>
            </li>
          );
        })}
        {after > 0 && <li className="film-spacer" aria-hidden="true" style={spacer(after)} />}
      </ul>
    </div>
  );
}

/**
 * The session filmstrip: every take of this session, newest first, variations stacked under their
 * source; a click puts one on the stage, 2–4 checked play side by side, and a take drags onto the
 * start-frame slot.
 */
export function Filmstrip({ takes }: { takes: Take[] }) {
  const focus = useStage((s) => s.focus);
  const compare = useStage((s) => s.compare);
  const onStage = stageTake(takes, focus);
  if (takes.length === 0) return null;
  return (
    <section className="filmstrip" aria-label="Session takes">
      <FilmColumns takes={takes} onStageKey={onStage?.key} />
      <div className="film-compare">
        <span className="faint">{compare.length === 0 ? 'Tick 2–4 takes to compare' : `${compare.length} ticked`}</span>
        <button
          type="button"
          className="btn btn-small"
          disabled={compare.length < 2}
          onClick={() => useStage.getState().setComparing(true)}
        >
          Play side by side
        </button>
      </div>
    </section>
  );
}
