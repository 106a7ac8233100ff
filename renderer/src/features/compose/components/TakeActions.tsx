import { useCallback, useId, useRef, useState } from 'react';
import { formatPrice } from '../../../lib/format.ts';
import { Icon } from '../../../lib/icons.tsx';
import { useDismiss } from '../../../lib/useDismiss.ts';
import { openInLibrary } from '../../../stores/library/index.ts';
import { useStage, type Take } from '../../../stores/stage/index.ts';
import {
  downloadTake,
  extend,
  makeVariations,
  reroll,
  toggleFavourite,
  putAsStartFrame,
} from '../../../stores/stage/actions.ts';
import { takeUnitPrice, variationsPrice } from '../../../stores/stage/takes.ts';

/** " · $0.40", or nothing when the price is not known: every costly button says what it costs. */
function priced(usd: number | null): string {
  return usd === null ? '' : ` · ${formatPrice(usd)}`;
}

/**
 * One row of actions on the take on the stage (docs/workflows.md, "The canvas"): Re-roll ·
 * Variations ×N · Extend · Use as start frame · ★ · Download · ⋯. A take still rendering can only be
 * re-rolled; the rest wait for its item.
 */
export function TakeActions({ take }: { take: Take }) {
  const id = useId();
  const busy = useStage((s) => s.busy);
  const count = useStage((s) => s.variationCount);
  const setCount = useStage((s) => s.setVariationCount);
  const item = take.item?.item;
  const ready = take.item !== null;
  const video = item?.media === 'video';
  const unit = takeUnitPrice(take);
  return (
    <div className="take-actions" role="toolbar" aria-label="Take actions">
      <button
        type="button"
        className="btn"
        disabled={busy !== null || (!take.job && !ready)}
        title="The same settings with a new seed"
        onClick={() => void reroll(take)}
      >
        {busy === 'reroll' ? 'Re-rolling…' : `Re-roll${priced(unit)}`}
      </button>
      {video && (
        <span className="take-variations">
          <button
            type="button"
            className="btn"
            disabled={busy !== null}
            title={`${count} new takes of this video, each with its own seed`}
            onClick={() => void makeVariations(take, count)}
          >
            <span className="visually-hidden">Make </span>
            {busy === 'variations' ? 'Sending…' : `Variations ×${count}${priced(variationsPrice(take, count))}`}
          </button>
          <label className="visually-hidden" htmlFor={`${id}-n`}>
            Variation count
          </label>
          <select
            id={`${id}-n`}
            className="select take-count"
            value={count}
            onChange={(e) => setCount(Number(e.target.value))}
          >
            {[1, 2, 3, 4].map((n) => (
              <option key={n} value={n}>
                ×{n}
              </option>
            ))}
          </select>
        </span>
      )}
      {video && (
        <button
          type="button"
          className="btn"
          title="Its last frame becomes the next shot's start frame"
          onClick={() => void extend(take)}
        >
          Extend
        </button>
      )}
      {ready && (
        <button type="button" className="btn take-spare" onClick={() => void putAsStartFrame(take)}>
          Use as start frame
        </button>
      )}
      {ready && (
        <button
          type="button"
          className="btn btn-icon"
          aria-label="Favourite"
          aria-pressed={take.item!.favourite}
          onClick={() => void toggleFavourite(take)}
        >
          <Icon name="star" size={16} />
        </button>
      )}
      {ready && (
        <button type="button" className="btn take-spare" onClick={() => void downloadTake(take)}>
          Download
        </button>
      )}
      {ready && <MoreMenu take={take} />}
    </div>
  );
}

/**
 * ⋯: trim, export and details (in the Library). In a narrow stage (docs/workflows.md, "Windows")
 * the row's least-used actions, Use as start frame and Download, move in here under the same names:
 * CSS shows each in one place only, so assistive technology meets each name once.
 */
function MoreMenu({ take }: { take: Take }) {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const close = useCallback(() => setOpen(false), []);
  useDismiss(open, box, close);
  const run = (action: () => Promise<void>) => () => {
    setOpen(false);
    void action();
  };
  return (
    <div className="take-more" ref={box}>
      <button
        type="button"
        className="btn btn-ghost"
        aria-label="More: trim, export, details"
        aria-expanded={open}
        title="More actions"
        onClick={() => setOpen(!open)}
      >
        ⋯
      </button>
      {open && (
        <div className="take-menu" role="group" aria-label="More take actions">
          <button type="button" className="btn btn-ghost take-menu-spare" onClick={run(() => putAsStartFrame(take))}>
            Use as start frame
          </button>
          <button type="button" className="btn btn-ghost take-menu-spare" onClick={run(() => downloadTake(take))}>
            Download
          </button>
          <button type="button" className="btn btn-ghost" onClick={run(() => openInLibrary(take.itemId!))}>
            Trim, export, details…
          </button>
        </div>
      )}
    </div>
  );
}
