import { useEffect } from 'react';
import { useShell } from '../../../lib/shell/index.ts';
import { formatInteger } from '../../../lib/format.ts';
import { ipc } from '../../../lib/ipc.ts';
import { useNow } from '../../../lib/useNow.ts';
import { useModels } from '../../../stores/models/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { activeFilterCount, detailItem, selectedIds } from '../../../stores/library/selectors.ts';
import { DetailPanel } from './DetailPanel.tsx';
import { LibraryFilters } from './LibraryFilters.tsx';
import { LibraryGrid } from './LibraryGrid.tsx';
import { useShallow } from 'zustand/react/shallow';
import '../library.css';

export function LibraryScreen() {
  const status = useLibrary((s) => s.status);
  const error = useLibrary((s) => s.error);
  const total = useLibrary((s) => s.total);
  const publicFeed = useLibrary((s) => s.filters.publicFeed);
  const filtered = useLibrary((s) => activeFilterCount(s.filters) > 0);
  const selection = useLibrary(useShallow(selectedIds));
  const detail = useLibrary((s) => detailItem(s));
  const setFilters = useLibrary((s) => s.setFilters);
  const modelsStatus = useModels((s) => s.status);
  const go = useShell((s) => s.go);
  const now = useNow(60_000);

  useEffect(() => {
    if (useLibrary.getState().status === 'idle') {
      void useLibrary.getState().reload();
      // Pick up what the service has that the index lacks; library.changed reloads when it lands.
      void ipc()
        .library.sync(undefined)
        .catch(() => undefined);
    }
    if (modelsStatus === 'idle') void useModels.getState().load();
  }, [modelsStatus]);

  const lib = useLibrary.getState();
  return (
    <div className="screen" style={{ height: '100%', minHeight: 0 }}>
      <header className="screen-head">
        <h1>{publicFeed ? 'Public feed' : 'Library'}</h1>
        <span className="faint" aria-live="polite">
          {status === 'ready' ? `${formatInteger(total)} item${total === 1 ? '' : 's'}` : ''}
        </span>
        <span className="spacer" />
        <label className="switch">
          <input
            type="checkbox"
            role="switch"
            checked={publicFeed}
            onChange={(e) => setFilters({ publicFeed: e.target.checked })}
          />
          Public feed
        </label>
        <button type="button" className="btn btn-small" onClick={() => void lib.reload({ keepLoaded: true })}>
          Refresh
        </button>
      </header>
      <LibraryFilters />
      {selection.length > 1 && !publicFeed && (
        <div className="bulk-bar" role="toolbar" aria-label="Bulk actions">
          <strong>{selection.length} selected</strong>
          <span className="grow" />
          <button type="button" className="btn btn-small btn-primary" onClick={() => void lib.download(selection)}>
            Download {selection.length}
          </button>
          <button type="button" className="btn btn-small" onClick={() => void lib.setFavourite(selection, true)}>
            Favourite {selection.length}
          </button>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => lib.clearSelection()}>
            Clear selection
          </button>
        </div>
      )}
      <div className="library" style={{ height: 'auto', flex: 1 }}>
        <div className="library-main">
          {status === 'loading' && (
            <div
              role="status"
              aria-label="Loading the library"
              className="grid-row"
              style={{ position: 'static', gridTemplateColumns: 'repeat(auto-fill, minmax(220px, 1fr))' }}
            >
              {Array.from({ length: 8 }, (_, i) => (
                <div key={i} className="skeleton" style={{ aspectRatio: '16 / 11' }} />
              ))}
            </div>
          )}
          {status === 'error' && (
            <div className="notice notice-error" role="alert">
              <span className="grow">Could not load the library: {error}</span>
              <button type="button" className="btn btn-small" onClick={() => void lib.reload()}>
                Retry
              </button>
            </div>
          )}
          {status === 'ready' && total === 0 && filtered && (
            <div className="empty">
              <h2>No item matches the filters</h2>
              <p>
                {publicFeed ? 'No public item matches these filters.' : 'None of your items match these filters.'} Clear
                them to see everything again.
              </p>
              <button type="button" className="btn btn-primary" onClick={() => lib.clearFilters()}>
                Clear filters
              </button>
            </div>
          )}
          {status === 'ready' && total === 0 && !filtered && (
            <div className="empty">
              <h2>{publicFeed ? 'No public media yet' : 'Nothing here yet'}</h2>
              <p>
                {publicFeed
                  ? 'Public generations from other users will appear here.'
                  : 'Generated videos and images appear here, with thumbnails, as soon as they finish.'}
              </p>
              {!publicFeed && (
                <button type="button" className="btn btn-primary" onClick={() => go('compose')}>
                  Compose something
                </button>
              )}
            </div>
          )}
          {status === 'ready' && total > 0 && <LibraryGrid now={now} />}
        </div>
        {detail && <DetailPanel key={detail.item.id} entry={detail} now={now} feed={publicFeed} />}
      </div>
    </div>
  );
}
