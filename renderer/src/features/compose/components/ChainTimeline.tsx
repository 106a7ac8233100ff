import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import type { ChainShot, ChainView } from '../../../../../shared/ipc/index.ts';
import { LIBRARY_DRAG_TYPE } from '../../../lib/drag.ts';
import { useChainOf, useChains } from '../../../stores/chains/index.ts';
import {
  chainSeconds,
  playedSeconds,
  shotShares,
  showsChain,
  steppedPosition,
} from '../../../stores/chains/timeline.ts';
import { dragPayload, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { useStage, type Take } from '../../../stores/stage/index.ts';
import { extend } from '../../../stores/stage/actions.ts';
import { allTakes, stageTake } from '../../../stores/stage/takes.ts';
import { toastError } from '../../../stores/toasts/index.ts';
import { TrimHandles } from './TrimHandles.tsx';
import '../chain-timeline.css';

/** A shot dragged within the timeline (its item id); a drop elsewhere reads the Library payload beside it. */
const SHOT_DRAG_TYPE = 'application/x-clipdesk-shot';

const seconds = (n: number) => `${Math.round(n * 10) / 10} s`;
const promptOf = (shot: ChainShot) => shot.item?.item.prompt ?? shot.itemId;

/** Puts a shot on the stage: the session's take when it is one, else the item joins the session. */
function showShot(shot: ChainShot, takes: readonly Take[]): void {
  const stage = useStage.getState();
  if (allTakes(takes).some((t) => t.itemId === shot.itemId)) stage.focusTake({ kind: 'item', id: shot.itemId });
  else if (shot.item) stage.showItem(shot.item);
}

function moveShot(itemId: string, position: number): void {
  useChains
    .getState()
    .move(itemId, position)
    .catch((error: unknown) => toastError('Could not move the shot', error));
}

interface ShotProps {
  shot: ChainShot;
  share: number;
  /** The chain's shots in order. */
  shots: readonly ChainShot[];
  onStage: boolean;
  takes: readonly Take[];
  register: (itemId: string, button: HTMLButtonElement | null) => void;
  onMoved: (itemId: string) => void;
}

/** One shot: its picture (a click puts it on the stage), its trim handles, and its move buttons. */
function TimelineShot({ shot, share, shots, onStage, takes, register, onMoved }: ShotProps) {
  const [dropping, setDropping] = useState(false);
  const n = shot.position;
  const thumb = shot.item ? thumbnailUrl(shot.item) : null;
  const move = (delta: number) => {
    const to = steppedPosition(shots, shot.itemId, delta);
    if (to === null) return;
    onMoved(shot.itemId);
    moveShot(shot.itemId, to);
  };
  const onKey = (e: KeyboardEvent) => {
    if (!e.altKey || (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight')) return;
    e.preventDefault();
    move(e.key === 'ArrowLeft' ? -1 : 1);
  };
  const onDrop = (e: DragEvent) => {
    setDropping(false);
    const id = e.dataTransfer.getData(SHOT_DRAG_TYPE);
    if (!id || id === shot.itemId) return;
    e.preventDefault();
    onMoved(id);
    moveShot(id, n);
  };
  const trimmed = shot.trim ? ` (trimmed ${shot.trim.start}–${shot.trim.end} s)` : '';
  return (
    <li
      className={`tl-shot${onStage ? ' on-stage' : ''}${dropping ? ' dropping' : ''}`}
      style={{ flexGrow: share }}
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes(SHOT_DRAG_TYPE)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'move';
        setDropping(true);
      }}
      onDragLeave={() => setDropping(false)}
      onDrop={onDrop}
    >
      <div className="tl-clip">
        <button
          type="button"
          ref={(b) => register(shot.itemId, b)}
          className="tl-show"
          aria-label={`Shot ${n}: ${promptOf(shot)}${trimmed}`}
          aria-current={onStage ? 'true' : undefined}
          aria-keyshortcuts="Alt+ArrowLeft Alt+ArrowRight"
          title={`Shot ${n}: ${promptOf(shot)}${trimmed}`}
          draggable={shot.item !== null}
          onDragStart={(e) => {
            e.dataTransfer.setData(SHOT_DRAG_TYPE, shot.itemId);
            if (shot.item) e.dataTransfer.setData(LIBRARY_DRAG_TYPE, JSON.stringify(dragPayload(shot.item)));
            e.dataTransfer.effectAllowed = 'copyMove';
          }}
          onClick={() => showShot(shot, takes)}
          onKeyDown={onKey}
        >
          {thumb ? <img src={thumb} alt="" draggable={false} /> : <span className="tl-missing" />}
          <span className="tl-pos" aria-hidden="true">
            {n}
          </span>
        </button>
        <TrimHandles shot={shot} />
      </div>
      <div className="tl-foot">
        <button
          type="button"
          className="tl-move"
          aria-label={`Move shot ${n} earlier`}
          disabled={n === 1}
          onClick={() => move(-1)}
        >
          ‹
        </button>
        <span className="tl-length">{seconds(playedSeconds(shot))}</span>
        <button
          type="button"
          className="tl-move"
          aria-label={`Move shot ${n} later`}
          disabled={n === shots.length}
          onClick={() => move(1)}
        >
          ›
        </button>
      </div>
    </li>
  );
}

function Track({
  chain,
  current,
  pending,
  takes,
}: {
  chain: ChainView;
  current: string | null;
  pending: boolean;
  takes: readonly Take[];
}) {
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  const refocus = useRef<string | null>(null);
  // A moved shot keeps the keyboard: its button is found again at its new place.
  useEffect(() => {
    if (!refocus.current) return;
    buttons.current.get(refocus.current)?.focus();
    refocus.current = null;
  }, [chain]);
  const shots = chain.shots;
  const shares = shotShares(shots);
  const last = shots.at(-1);
  return (
    <section className="chain-timeline" aria-label="Shot chain timeline">
      <div className="tl-head">
        <strong>Shot chain</strong>
        <span className="field-help">
          {shots.length} shots · {seconds(chainSeconds(shots))} · drag or Alt+←/→ to reorder
        </span>
      </div>
      <ol className="tl-track" aria-label="Shots in order">
        {shots.map((shot, i) => (
          <TimelineShot
            key={shot.itemId}
            shot={shot}
            share={shares[i] ?? 0}
            shots={shots}
            onStage={shot.itemId === current}
            takes={takes}
            register={(id, b) => (b ? buttons.current.set(id, b) : buttons.current.delete(id))}
            onMoved={(id) => (refocus.current = id)}
          />
        ))}
        {pending && (
          <li className="tl-pending" aria-label="Next shot rendering">
            Rendering…
          </li>
        )}
        <li className="tl-continue">
          <button
            type="button"
            className="btn btn-small"
            title="Its last frame into the start-frame slot, and the prompt for the next shot"
            disabled={!last?.item}
            onClick={() => last?.item && void extend({ item: last.item, job: null })}
          >
            + continue
          </button>
        </li>
      </ol>
    </section>
  );
}

/**
 * The shot chain of the take on the stage as a timeline above the prompt dock (docs/workflows.md, "The
 * canvas"): its shots in order, each as wide as its clip is long, with trim handles, drag and Alt+←/→ to
 * reorder, and "+ continue" at the end (Extend of the last shot). Nothing when the take is in no chain.
 */
export function ChainTimeline({ takes }: { takes: readonly Take[] }) {
  const focus = useStage((s) => s.focus);
  const take = stageTake(takes, focus);
  // A shot still rendering shows the chain it continues.
  const itemId = take?.itemId ?? take?.job?.request.parentItemId ?? null;
  const chain = useChainOf(itemId, take?.item);
  if (!showsChain(chain, itemId)) return null;
  const state = take?.job?.state;
  const pending = !take?.itemId && state !== undefined && state !== 'failed' && state !== 'canceled';
  return <Track chain={chain} current={take?.itemId ?? null} pending={pending} takes={takes} />;
}
