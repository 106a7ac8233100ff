import { useState } from 'react';
import type { ExportFormat, LibraryItem, LocalFile } from '../../../../../shared/ipc/index.ts';
import { useShell } from '../../../lib/shell/index.ts';
import { expiryLabel, formatBytes, formatDate, formatPrice } from '../../../lib/format.ts';
import { useCompose } from '../../compose/store/index.ts';
import { useModels } from '../../models/store/index.ts';
import { useSettings } from '../../settings/store/index.ts';
import { toastError, toastSuccess } from '../../toasts/store/index.ts';
import { useLibrary } from '../store/index.ts';
import { daysLeft, playableUrl, thumbnailUrl } from '../store/selectors.ts';

const EXPORTS: { value: ExportFormat; label: string; video: boolean }[] = [
  { value: 'mp4', label: 'MP4', video: true },
  { value: 'webm', label: 'WebM', video: true },
  { value: 'gif', label: 'GIF', video: true },
  { value: 'frame', label: 'Frame (PNG)', video: true },
  { value: 'contactSheet', label: 'Contact sheet', video: true },
];

export function DetailPanel({ entry, now, feed }: { entry: LibraryItem; now: number; feed: boolean }) {
  const { item } = entry;
  const busy = useLibrary((s) => s.busy[item.id]);
  const canReveal = useSettings((s) => s.app?.capabilities.revealInFolder ?? false);
  const go = useShell((s) => s.go);
  const [format, setFormat] = useState<ExportFormat>('gif');
  const [exported, setExported] = useState<LocalFile | null>(null);
  const lib = useLibrary.getState();
  const isVideo = item.media === 'video';
  const days = daysLeft(entry, now);
  const stats = (item as Record<string, unknown>)['stats'] as Record<string, unknown> | undefined;

  const useAsStartFrame = () => {
    useCompose.getState().setMedia('video');
    useCompose.getState().setStartFrame({
      source: 'library',
      mediaId: item.id,
      name: item.prompt.slice(0, 60) || item.id,
      previewUrl: thumbnailUrl(entry) ?? item.url,
    });
    go('compose');
  };
  const takeLastFrame = async () => {
    const file = await lib.useLastFrame(item.id);
    if (!file) return;
    useCompose.getState().setMedia('video');
    useCompose.getState().setStartFrame({
      source: 'library',
      mediaId: item.id,
      name: `Last frame of “${item.prompt.slice(0, 40)}”`,
      previewUrl: file.url,
      lastFramePath: file.path,
    });
    go('compose');
  };
  const regenerate = () => {
    const model = useModels.getState().models.find((m) => `${m.base}/${m.slug}` === item.model || m.id === item.model);
    useCompose.getState().applySettings({
      media: isVideo ? 'video' : 'image',
      prompt: item.prompt,
      modelId: model?.id ?? null,
      params: { ...(isVideo ? { duration: item.duration } : {}), size: item.size, public: item.public ?? false },
      provider: null,
    });
    go('compose');
  };
  const copyPrompt = async () => {
    try {
      await navigator.clipboard.writeText(item.prompt);
      toastSuccess('Prompt copied');
    } catch (error) {
      toastError('Could not copy the prompt', error);
    }
  };

  return (
    <aside className="detail" aria-label="Item details">
      <div className="panel-head">
        <h2>{isVideo ? 'Video' : 'Image'}</h2>
        <button type="button" className="icon-btn" aria-label="Close details" onClick={() => lib.open(null)}>
          ×
        </button>
      </div>
      {isVideo ? (
        <video
          key={item.id}
          src={playableUrl(entry)}
          poster={thumbnailUrl(entry) ?? undefined}
          controls
          loop
          playsInline
          aria-label="Player"
        />
      ) : (
        <img className="detail-media" src={playableUrl(entry)} alt={item.prompt} />
      )}
      {busy && (
        <div className="notice notice-info" role="status">
          {busy}
        </div>
      )}
      {entry.lost && <div className="notice notice-error">The service deleted this item before it was downloaded.</div>}
      {!entry.lost && days !== null && (
        <div className={`notice ${days <= 3 ? 'notice-warning' : 'notice-info'}`}>
          {expiryLabel(days)} by the service. Download or keep it to prevent that.
        </div>
      )}
      <p style={{ fontSize: 13 }}>{item.prompt}</p>
      <dl className="meta">
        <dt>Model</dt>
        <dd>{item.modelSlug || item.model}</dd>
        <dt>Provider</dt>
        <dd>{item.providerName || item.provider}</dd>
        <dt>Size</dt>
        <dd>
          {item.size}
          {item.width ? ` (${item.width}×${item.height})` : ''}
        </dd>
        {isVideo && (
          <>
            <dt>Duration</dt>
            <dd>{item.duration}s</dd>
          </>
        )}
        {item.price !== undefined && (
          <>
            <dt>Price</dt>
            <dd>{formatPrice(item.price)}</dd>
          </>
        )}
        {item.bytes !== undefined && (
          <>
            <dt>File</dt>
            <dd>{formatBytes(item.bytes)}</dd>
          </>
        )}
        {stats && (
          <>
            <dt>Stats</dt>
            <dd className="mono">
              {Object.entries(stats)
                .map(([k, v]) => `${k}: ${typeof v === 'number' ? Math.round(v * 100) / 100 : String(v)}`)
                .join(' · ')}
            </dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatDate(item.createdAt)}</dd>
        <dt>Visibility</dt>
        <dd>{item.public ? 'Public' : 'Private'}</dd>
        {entry.localPath && (
          <>
            <dt>On disk</dt>
            <dd className="mono">{entry.localPath}</dd>
          </>
        )}
      </dl>
      <div className="divider" />
      <div className="row" role="group" aria-label="Actions">
        {!feed && (
          <button
            type="button"
            className="btn btn-primary btn-small"
            disabled={!!busy || entry.lost}
            onClick={() => void lib.download([item.id])}
          >
            {entry.localPath ? 'Download again' : 'Download'}
          </button>
        )}
        {!feed && canReveal && entry.localPath && (
          <button type="button" className="btn btn-small" onClick={() => void lib.reveal(item.id)}>
            Reveal in folder
          </button>
        )}
        {!feed && (
          <button
            type="button"
            className="btn btn-small"
            aria-pressed={entry.favourite}
            onClick={() => void lib.setFavourite([item.id], !entry.favourite)}
          >
            {entry.favourite ? '★ Favourite' : '☆ Favourite'}
          </button>
        )}
        {!feed && days !== null && (
          <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void lib.retain(item.id)}>
            Keep
          </button>
        )}
        <button type="button" className="btn btn-small" onClick={() => void copyPrompt()}>
          Copy prompt
        </button>
        <button type="button" className="btn btn-small" onClick={regenerate}>
          Regenerate
        </button>
        {!isVideo && (
          <button type="button" className="btn btn-small" onClick={useAsStartFrame}>
            Use as start frame
          </button>
        )}
        {isVideo && !feed && (
          <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void takeLastFrame()}>
            Use last frame
          </button>
        )}
      </div>
      {isVideo && !feed && (
        <div className="row">
          <select
            className="select grow"
            aria-label="Export format"
            value={format}
            onChange={(e) => setFormat(e.target.value as ExportFormat)}
          >
            {EXPORTS.filter((x) => x.video || !isVideo).map((x) => (
              <option key={x.value} value={x.value}>
                {x.label}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="btn btn-small"
            disabled={!!busy}
            onClick={() => {
              void lib.exportAs(item.id, format).then((f) => f && setExported(f));
            }}
          >
            Export
          </button>
        </div>
      )}
      {exported && (
        <div className="notice notice-info" role="status" aria-label="Export result">
          <span className="grow mono">
            {exported.mime} · {formatBytes(exported.bytes)}
            <br />
            {exported.path}
          </span>
          <a className="btn btn-small" href={exported.url} target="_blank" rel="noreferrer">
            Open
          </a>
        </div>
      )}
    </aside>
  );
}
