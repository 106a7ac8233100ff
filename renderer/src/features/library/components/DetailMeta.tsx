import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { formatBytes, formatDate, formatPrice } from '../../../lib/format.ts';
import { useLibrary } from '../store/index.ts';

/** The source video's id when the item was made by `POST /videos/variations` (issue 13). */
function variationOf(entry: LibraryItem): string | null {
  const v = (entry.item as Record<string, unknown>)['variationOf'];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** Extra numbers some providers report (seed, steps …), shown as they come. */
function statsOf(entry: LibraryItem): Record<string, unknown> | undefined {
  return (entry.item as Record<string, unknown>)['stats'] as Record<string, unknown> | undefined;
}

/** What is known about an item: model, provider, size, cost, dates and where it is on disk. */
export function DetailMeta({ entry }: { entry: LibraryItem }) {
  const { item } = entry;
  const stats = statsOf(entry);
  const source = variationOf(entry);
  const sourceEntry = useLibrary((s) => (source ? s.items.find((e) => e.item.id === source) : undefined));
  return (
    <dl className="meta">
      {source && (
        <>
          <dt>Variation of</dt>
          <dd>
            <button
              type="button"
              className="variation-link"
              title={`Open ${source}`}
              onClick={() => void useLibrary.getState().openById(source)}
            >
              {sourceEntry ? `“${sourceEntry.item.prompt.slice(0, 60)}”` : source}
            </button>
          </dd>
        </>
      )}
      <dt>Model</dt>
      <dd>{item.modelSlug || item.model}</dd>
      <dt>Provider</dt>
      <dd>{item.providerName || item.provider}</dd>
      <dt>Size</dt>
      <dd>
        {item.size}
        {item.width ? ` (${item.width}×${item.height})` : ''}
      </dd>
      {item.media === 'video' && (
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
  );
}
