import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { ChainShot } from '../../../../../shared/ipc/index.ts';
import { useChains } from '../../../stores/chains/index.ts';
import {
  clipSeconds,
  currentTrim,
  draggedTrim,
  keyedTrim,
  trimToStore,
  type Trim,
} from '../../../stores/chains/timeline.ts';
import { toastError } from '../../../stores/toasts/index.ts';

/** Keys pressed on a handle are stored once the creator pauses this long, not on every tenth. */
const KEY_COMMIT_MS = 500;

const percent = (part: number, whole: number) => `${whole > 0 ? (part / whole) * 100 : 0}%`;

/**
 * A shot's in and out handles over its picture (docs/workflows.md, "Shot chains"): dragged or moved by
 * the keyboard, the trim is stored as the Library's "Use trimmed clip in chain" stores it
 * (library.setShotTrim, and the shot's sidecar), and back to the whole clip when both handles are at its ends.
 */
export function TrimHandles({ shot }: { shot: ChainShot }) {
  const duration = clipSeconds(shot);
  const [draft, setDraft] = useState<Trim | null>(null);
  const drag = useRef<{ edge: 'start' | 'end'; x: number; from: Trim; width: number } | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  if (duration <= 0) return null;
  const trim = draft ?? currentTrim(shot);

  const commit = (t: Trim) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    useChains
      .getState()
      .setTrim(shot.itemId, trimToStore(duration, t))
      .catch((error: unknown) => toastError('Could not trim the shot', error))
      .finally(() => setDraft(null));
  };
  const onPointerDown = (edge: 'start' | 'end') => (e: PointerEvent<HTMLSpanElement>) => {
    const clip = e.currentTarget.parentElement;
    e.currentTarget.setPointerCapture(e.pointerId);
    drag.current = { edge, x: e.clientX, from: trim, width: clip?.getBoundingClientRect().width ?? 0 };
  };
  const onPointerMove = (e: PointerEvent) => {
    const d = drag.current;
    if (d) setDraft(draggedTrim(duration, d.width, d.from, d.edge, e.clientX - d.x));
  };
  const onPointerUp = () => {
    if (!drag.current) return;
    drag.current = null;
    if (draft) commit(draft);
  };
  const onKey = (edge: 'start' | 'end') => (e: KeyboardEvent) => {
    const next = keyedTrim(duration, trim, edge, e.key, e.shiftKey);
    if (!next || e.altKey) return;
    e.preventDefault();
    setDraft(next);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => commit(next), KEY_COMMIT_MS);
  };
  const handle = (edge: 'start' | 'end') => {
    const value = edge === 'start' ? trim.start : trim.end;
    return (
      <span
        role="slider"
        tabIndex={0}
        className={`tl-handle tl-handle-${edge}`}
        style={{ left: percent(value, duration) }}
        aria-label={`${edge === 'start' ? 'In' : 'Out'} point of shot ${shot.position}`}
        aria-valuemin={0}
        aria-valuemax={duration}
        aria-valuenow={value}
        aria-valuetext={`${value} s`}
        aria-orientation="horizontal"
        onPointerDown={onPointerDown(edge)}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerCancel={onPointerUp}
        onKeyDown={onKey(edge)}
        onBlur={() => timer.current && draft && commit(draft)}
      />
    );
  };
  return (
    <>
      <span className="tl-cut" style={{ left: 0, width: percent(trim.start, duration) }} aria-hidden="true" />
      <span className="tl-cut" style={{ right: 0, width: percent(duration - trim.end, duration) }} aria-hidden="true" />
      {handle('start')}
      {handle('end')}
    </>
  );
}
