import { useState } from 'react';
import { LIBRARY_DRAG_TYPE, type LibraryDragPayload } from '../../../lib/drag.ts';
import { previewUrl, thumbnailUrl } from '../../../stores/library/selectors.ts';
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
          const { item } = take.item;
          const payload: LibraryDragPayload = {
            id: item.id,
            name: item.prompt.slice(0, 60) || item.id,
            previewUrl: thumbnailUrl(take.item) ?? item.url,
            media: item.media === 'video' ? 'video' : 'image',
          };
          e.dataTransfer.setData(LIBRARY_DRAG_TYPE, JSON.stringify(payload));
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
      <ul className="film-columns">
        {takes.map((take) => (
          <li key={take.key} className="film-column">
            <ul className="film-stack" aria-label={`Takes of ${takeName(take)}`}>
              <FilmTake take={take} onStage={onStage?.key === take.key} />
              {take.variations.map((v) => (
                <FilmTake key={v.key} take={v} onStage={onStage?.key === v.key} />
              ))}
            </ul>
          </li>
        ))}
      </ul>
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
