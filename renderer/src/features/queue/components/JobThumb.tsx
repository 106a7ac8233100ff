import { useEffect, useState } from 'react';
import type { Job } from '../../../../../shared/ipc/index.ts';
import { Icon } from '../../../lib/icons.tsx';
import { previewUrl, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { stateLabel } from '../store/selectors.ts';
import { takeItemId, useTakes } from '../store/takes.ts';

const FINISHED_MARK: Partial<Record<Job['state'], string>> = { done: '✓', failed: '!', canceled: '–' };

/**
 * A job's picture in the queue and the jobs popover: its take's thumbnail with a play button that
 * plays the take in place (muted, looping, the small preview rendition when there is one), or, before
 * it has a take, its place in the queue or how it ended.
 */
export function JobThumb({ job, index, now }: { job: Job; index: number | null; now: number }) {
  const itemId = takeItemId(job);
  const entry = useTakes((s) => (itemId ? s.byItem[itemId] : undefined));
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    if (itemId) useTakes.getState().want(itemId);
  }, [itemId]);
  if (index !== null || !entry) {
    return (
      <div
        className={`job-pos${job.state === 'generating' ? ' job-pos-live' : ''}`}
        aria-label={index !== null ? `Position ${index + 1} in the queue` : stateLabel(job, now)}
      >
        {index !== null ? index + 1 : (FINISHED_MARK[job.state] ?? '…')}
      </div>
    );
  }
  const thumb = thumbnailUrl(entry);
  const video = entry.item.media === 'video';
  return (
    <div className="job-thumb">
      {playing && video ? (
        <video src={previewUrl(entry)} poster={thumb ?? undefined} autoPlay muted loop playsInline aria-label="Take" />
      ) : thumb ? (
        <img src={thumb} alt="" loading="lazy" decoding="async" />
      ) : null}
      {video && (
        <button
          type="button"
          className="job-thumb-play"
          aria-pressed={playing}
          aria-label={`${playing ? 'Stop' : 'Play'} ${job.request.prompt}`}
          onClick={() => setPlaying(!playing)}
        >
          {playing ? <span aria-hidden="true">■</span> : <Icon name="play" size={14} />}
        </button>
      )}
    </div>
  );
}
