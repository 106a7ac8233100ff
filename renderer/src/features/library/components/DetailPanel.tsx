import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { expiryLabel } from '../../../lib/format.ts';
import { useLibrary } from '../store/index.ts';
import { daysLeft, playableUrl, thumbnailUrl } from '../store/selectors.ts';
import { DetailActions } from './DetailActions.tsx';
import { DetailMeta } from './DetailMeta.tsx';
import { ChainStrip } from './ChainStrip.tsx';
import { ExportControls } from './ExportControls.tsx';
import { TrimControls } from './TrimControls.tsx';
import { VideoPlayer } from './VideoPlayer.tsx';

/** Why the item may go away: lost already, or deleted by the service in so many days. */
function RetentionNotice({ entry, days }: { entry: LibraryItem; days: number | null }) {
  if (entry.lost)
    return <div className="notice notice-error">The service deleted this item before it was downloaded.</div>;
  if (days === null) return null;
  return (
    <div className={`notice ${days <= 3 ? 'notice-warning' : 'notice-info'}`}>
      {expiryLabel(days)} by the service. Download or keep it to prevent that.
    </div>
  );
}

/** The open Library item: its media, what is known about it, and what can be done with it. */
export function DetailPanel({ entry, now, feed }: { entry: LibraryItem; now: number; feed: boolean }) {
  const { item } = entry;
  const busy = useLibrary((s) => s.busy[item.id]);
  const isVideo = item.media === 'video';
  const days = daysLeft(entry, now);
  return (
    <aside className="detail" aria-label="Item details">
      <div className="panel-head">
        <h2>{isVideo ? 'Video' : 'Image'}</h2>
        <button
          type="button"
          className="icon-btn"
          aria-label="Close details"
          onClick={() => useLibrary.getState().open(null)}
        >
          ×
        </button>
      </div>
      {isVideo ? (
        <VideoPlayer key={item.id} src={playableUrl(entry)} poster={thumbnailUrl(entry) ?? undefined} />
      ) : (
        <img className="detail-media" src={playableUrl(entry)} alt={item.prompt} />
      )}
      {busy && (
        <div className="notice notice-info" role="status">
          {busy}
        </div>
      )}
      <RetentionNotice entry={entry} days={days} />
      <p style={{ fontSize: 13 }}>{item.prompt}</p>
      <DetailMeta entry={entry} />
      {isVideo && !feed && <ChainStrip entry={entry} />}
      <div className="divider" />
      <DetailActions entry={entry} feed={feed} days={days} />
      {isVideo && !feed && <ExportControls itemId={item.id} />}
      {isVideo && !feed && <TrimControls key={item.id} entry={entry} />}
    </aside>
  );
}
