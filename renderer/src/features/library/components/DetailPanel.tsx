import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { retentionView, type RetentionView } from '../../../stores/library/retention.ts';
import { playableUrl, thumbnailUrl } from '../../../stores/library/selectors.ts';
import { gridView } from '../../../stores/library/view.ts';
import { DetailActions } from './DetailActions.tsx';
import { DetailMeta } from './DetailMeta.tsx';
import { ChainStrip } from './ChainStrip.tsx';
import { ExportControls } from './ExportControls.tsx';
import { TrimControls } from './TrimControls.tsx';
import { VideoPlayer } from './VideoPlayer.tsx';

const NOTICE_TONE: Readonly<Record<RetentionView['tone'], string>> = {
  danger: 'notice-error',
  warning: 'notice-warning',
  info: 'notice-info',
  success: 'notice-success',
};

/** Whether the service deletes the item, and when: the same one sentence the tile's badge abbreviates. */
function RetentionNotice({ retention }: { retention: RetentionView }) {
  return (
    <div className={`notice ${NOTICE_TONE[retention.tone]}`} data-testid="retention-notice">
      {retention.notice}
    </div>
  );
}

/**
 * A stack's cover opens its stack in the grid from here too: the keyboard's way, as the tile's
 * count is not focusable (an option holds nothing focusable).
 */
function StackControl({ id }: { id: string }) {
  const variations = useLibrary((s) => gridView(s).stacks[id] ?? 0);
  const open = useLibrary((s) => s.expanded[id] === true);
  if (variations === 0) return null;
  return (
    <button
      type="button"
      className="btn btn-small"
      aria-expanded={open}
      onClick={() => useLibrary.getState().toggleStack(id)}
      style={{ alignSelf: 'flex-start' }}
    >
      {open ? 'Hide' : 'Show'} {variations} variation{variations === 1 ? '' : 's'}
    </button>
  );
}

/** The open Library item: its media, what is known about it, and what can be done with it. */
export function DetailPanel({ entry, now, feed }: { entry: LibraryItem; now: number; feed: boolean }) {
  const { item } = entry;
  const busy = useLibrary((s) => s.busy[item.id]);
  const isVideo = item.media === 'video';
  const policy = useSettings((s) => s.settings?.retentionPolicy);
  const retention = retentionView(entry, now, policy);
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
      {/* Someone else's public item: when their copy goes is not this creator's business. */}
      {!feed && <RetentionNotice retention={retention} />}
      <p style={{ fontSize: 13 }}>{item.prompt}</p>
      <DetailMeta entry={entry} />
      {!feed && <StackControl id={item.id} />}
      {isVideo && !feed && <ChainStrip entry={entry} />}
      <div className="divider" />
      <DetailActions entry={entry} feed={feed} canKeep={retention.canKeep} />
      {isVideo && !feed && <ExportControls itemId={item.id} />}
      {isVideo && !feed && <TrimControls key={`trim-${item.id}`} entry={entry} />}
    </aside>
  );
}
