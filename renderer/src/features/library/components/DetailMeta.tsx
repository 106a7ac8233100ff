import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { formatBytes, formatDate, formatPrice } from '../../../lib/format.ts';
import { useModels } from '../../../stores/models/index.ts';
import { modelIdParts, modelName, providerName } from '../../../stores/models/selectors.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { fileSizes, formatLabel } from '../../../stores/library/selectors.ts';

/** The source video's id when the item was made by `POST /videos/variations` (docs/workflows.md). */
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
  const model = useModels((s) => modelName(s.catalog, item.modelSlug || item.model));
  const provider = useModels((s) => providerName(s.providers, { id: item.provider, name: item.providerName }));
  const version = modelIdParts(item.modelSlug || item.model).version;
  const sizes = fileSizes(item);
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
      <dd title={item.modelSlug || item.model}>
        {model}
        {version ? ` v${version}` : ''}
      </dd>
      <dt>Provider</dt>
      <dd title={item.provider}>{provider}</dd>
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
      {sizes.main !== null && (
        <>
          <dt>File</dt>
          <dd>
            {formatBytes(sizes.main)} ({formatLabel(item.mime)})
          </dd>
        </>
      )}
      {sizes.others.length > 0 && (
        <>
          <dt>Also as</dt>
          <dd>{sizes.others.map((f) => `${formatLabel(f.mime)} ${formatBytes(f.bytes)}`).join(' · ')}</dd>
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
