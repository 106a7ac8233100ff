import { useEffect, useMemo } from 'react';
import type { Job, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { formatElapsed, formatPrice } from '../../../lib/format.ts';
import { ipc } from '../../../lib/ipc.ts';
import { useNow } from '../../../lib/useNow.ts';
import { playableUrl, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { useStage, type Take } from '../../../stores/stage/index.ts';
import { allTakes, missingItems, sessionTakes, stageTake } from '../../../stores/stage/takes.ts';
import { toastError } from '../../../stores/toasts/index.ts';
import { TakeActions } from './TakeActions.tsx';

/** The session's takes, as the stage and the filmstrip see them (their jobs as main last reported them). */
export function useSessionTakes(): Take[] {
  const entries = useStage((s) => s.entries);
  const jobs = useStage((s) => s.submitted);
  const items = useStage((s) => s.items);
  const takes = useMemo(() => sessionTakes(entries, jobs, items), [entries, jobs, items]);
  // A take that finished is fetched once, so the stage can play it.
  const missing = missingItems(takes).join(',');
  useEffect(() => {
    if (missing) void useStage.getState().loadItems(missing.split(','));
  }, [missing]);
  return takes;
}

/** A finished take at its own aspect ratio: a video plays, muted and looping; an image shows. */
export function TakeMedia({ entry, label }: { entry: LibraryItem; label: string }) {
  const { item } = entry;
  const ratio = item.width && item.height ? `${item.width} / ${item.height}` : '16 / 9';
  return item.media === 'video' ? (
    <video
      className="stage-media"
      style={{ aspectRatio: ratio }}
      src={playableUrl(entry)}
      poster={thumbnailUrl(entry) ?? undefined}
      aria-label={label}
      autoPlay
      loop
      muted
      playsInline
      controls
    />
  ) : (
    <img className="stage-media" style={{ aspectRatio: ratio }} src={playableUrl(entry)} alt={label} />
  );
}

/** What a job not done yet says: its real step and percent, else elapsed time and queue place, and its price. */
function progressText(job: Job, now: number): string {
  const parts: string[] = [];
  const step = job.generation?.step;
  const fraction = job.generation?.progress;
  if (job.state === 'queued') {
    parts.push(
      job.hold?.message ?? (job.position === null ? 'Queued' : `Queued · ${ordinal(job.position + 1)} in line`),
    );
  } else if (step) {
    parts.push(step.charAt(0).toUpperCase() + step.slice(1));
    if (fraction !== null && fraction !== undefined) parts.push(`${Math.round(fraction * 100)} %`);
    if (job.generation?.queuePosition) parts.push(`${ordinal(job.generation.queuePosition)} at the provider`);
  } else {
    parts.push(job.state.charAt(0).toUpperCase() + job.state.slice(1));
  }
  if (job.startedAt) parts.push(formatElapsed(elapsedSeconds(job, now)));
  return parts.join(' · ');
}

/** Seconds the job has been running (or ran). */
function elapsedSeconds(job: Job, now: number): number {
  const to = job.finishedAt ? Date.parse(job.finishedAt) : now;
  return Math.max(0, (to - Date.parse(job.startedAt ?? job.createdAt)) / 1000);
}

function ordinal(n: number): string {
  const rest = n % 100;
  const suffix = rest >= 11 && rest <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

function PendingTake({ take }: { take: Take }) {
  const now = useNow(1000);
  const job = take.job!;
  const frame = useStage((s) =>
    job.request.startFrame?.kind === 'item' ? s.items[job.request.startFrame.itemId] : undefined,
  );
  const price = job.route?.price ?? null;
  const failed = job.state === 'failed' || job.state === 'canceled';
  return (
    <div className="stage-pending">
      {frame && <img className="stage-frame" src={thumbnailUrl(frame) ?? frame.item.url} alt="" />}
      <div className="stage-progress" role="status" aria-label="Progress">
        <div className="stage-prompt">{job.request.prompt}</div>
        {failed ? (
          <>
            <div className="stage-failed">{job.state === 'failed' ? (job.error?.message ?? 'Failed') : 'Canceled'}</div>
            <button
              type="button"
              className="btn"
              onClick={() =>
                void ipc()
                  .jobs.retry({ id: job.id })
                  .catch((e: unknown) => toastError('Could not retry', e))
              }
            >
              Retry
            </button>
          </>
        ) : (
          <>
            <div
              className={`progress${typeof job.generation?.progress === 'number' ? '' : ' indeterminate'}`}
              aria-hidden="true"
            >
              <span style={{ width: `${Math.round((job.generation?.progress ?? 0) * 100)}%` }} />
            </div>
            <div>{progressText(job, now)}</div>
            {price !== null && <div className="faint">{formatPrice(price)}</div>}
          </>
        )}
      </div>
    </div>
  );
}

function EmptyStage() {
  return (
    <div className="stage-empty">
      <p className="stage-empty-title">Your takes play here</p>
      <p className="faint">Write a prompt below and press Generate: the take appears on this stage when it is done.</p>
    </div>
  );
}

/** Two to four takes side by side, started together and looping together. */
function CompareView({ takes }: { takes: Take[] }) {
  useEffect(() => {
    // Start every player from its first frame at once, so the takes play in step.
    const videos = [...document.querySelectorAll<HTMLVideoElement>('.stage-compare video')];
    for (const v of videos) {
      v.currentTime = 0;
      void v.play().catch(() => undefined);
    }
  }, [takes]);
  return (
    <div className="stage-compare" role="group" aria-label="Side by side">
      {takes.map((t) =>
        t.item ? <TakeMedia key={t.key} entry={t.item} label={`Compared take: ${t.item.item.prompt}`} /> : null,
      )}
    </div>
  );
}

/** The stage: the take on it (or the 2–4 compared), its progress while it renders, and its actions. */
export function Stage({ takes }: { takes: Take[] }) {
  const focus = useStage((s) => s.focus);
  const comparing = useStage((s) => s.comparing);
  const compare = useStage((s) => s.compare);
  const take = stageTake(takes, focus);
  const compared = allTakes(takes).filter((t) => t.itemId && compare.includes(t.itemId));
  return (
    <section className="stage" aria-label="Stage">
      <div className="stage-screen">
        {comparing && compared.length >= 2 ? (
          <CompareView takes={compared} />
        ) : !take ? (
          <EmptyStage />
        ) : take.item ? (
          <TakeMedia entry={take.item} label={`Take on stage: ${take.item.item.prompt}`} />
        ) : take.itemId ? (
          <div className="stage-pending" role="status" aria-label="Progress">
            Loading the take…
          </div>
        ) : (
          <PendingTake take={take} />
        )}
      </div>
      {take && !comparing && <TakeActions take={take} />}
      {comparing && (
        <div className="take-actions">
          <button type="button" className="btn" onClick={() => useStage.getState().setComparing(false)}>
            Back to one take
          </button>
        </div>
      )}
    </section>
  );
}
