import { useEffect, useMemo, useState } from 'react';
import { useModels } from '../../../stores/models/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { activeFilterCount } from '../../../stores/library/selectors.ts';

const SEARCH_DEBOUNCE_MS = 250;

export function LibraryFilters() {
  const filters = useLibrary((s) => s.filters);
  const setFilters = useLibrary((s) => s.setFilters);
  const clearFilters = useLibrary((s) => s.clearFilters);
  const models = useModels((s) => s.models);
  const providers = useModels((s) => s.providers);
  const [search, setSearch] = useState(filters.search);
  const [prevSearch, setPrevSearch] = useState(filters.search);
  if (filters.search !== prevSearch) {
    setPrevSearch(filters.search);
    setSearch(filters.search);
  }

  useEffect(() => {
    if (search === useLibrary.getState().filters.search) return undefined;
    const t = setTimeout(() => useLibrary.getState().setFilters({ search }), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [search]);

  const sizes = useMemo(() => {
    const set = new Set<string>();
    for (const m of models) for (const v of m.parameters?.size?.values ?? []) set.add(v);
    return [...set];
  }, [models]);
  const count = activeFilterCount(filters);

  return (
    <div className="filters" role="search" aria-label="Library filters">
      {!filters.publicFeed && (
        <div className="segmented" role="radiogroup" aria-label="Show">
          {(['takes', 'inputs'] as const).map((origin) => (
            <button
              key={origin}
              type="button"
              role="radio"
              aria-checked={filters.origin === origin}
              title={origin === 'inputs' ? 'Uploaded start frames and extracted frames' : 'What you generated'}
              onClick={() => setFilters({ origin })}
            >
              {origin === 'takes' ? 'Takes' : 'Inputs'}
            </button>
          ))}
        </div>
      )}
      <input
        className="input search"
        type="search"
        aria-label="Search prompts"
        placeholder="Search prompts…"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      <select
        className="select"
        aria-label="Kind"
        value={filters.media ?? ''}
        onChange={(e) => setFilters({ media: (e.target.value || null) as 'video' | 'image' | null })}
      >
        <option value="">All kinds</option>
        <option value="video">Videos</option>
        <option value="image">Images</option>
      </select>
      <select
        className="select"
        aria-label="Model filter"
        value={filters.model ?? ''}
        onChange={(e) => setFilters({ model: e.target.value || null })}
      >
        <option value="">All models</option>
        {models.map((m) => (
          <option key={m.id} value={`${m.base}/${m.slug}`}>
            {m.name}
          </option>
        ))}
      </select>
      <select
        className="select"
        aria-label="Provider filter"
        value={filters.provider ?? ''}
        onChange={(e) => setFilters({ provider: e.target.value || null })}
      >
        <option value="">All providers</option>
        {providers.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
      <select
        className="select"
        aria-label="Size filter"
        value={filters.size ?? ''}
        onChange={(e) => setFilters({ size: e.target.value || null })}
      >
        <option value="">All sizes</option>
        {sizes.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <select
        className="select"
        aria-label="Sort"
        value={filters.sort}
        onChange={(e) => setFilters({ sort: e.target.value as 'newest' | 'oldest' })}
      >
        <option value="newest">Newest first</option>
        <option value="oldest">Oldest first</option>
      </select>
      {!filters.publicFeed && (
        <>
          <button
            type="button"
            className="chip"
            aria-pressed={filters.downloaded}
            onClick={() => setFilters({ downloaded: !filters.downloaded })}
          >
            Downloaded
          </button>
          <button
            type="button"
            className="chip"
            aria-pressed={filters.favourite}
            onClick={() => setFilters({ favourite: !filters.favourite })}
          >
            ★ Favourites
          </button>
          <button
            type="button"
            className="chip"
            aria-pressed={filters.expiringSoon}
            onClick={() => setFilters({ expiringSoon: !filters.expiringSoon })}
          >
            Expiring soon
          </button>
        </>
      )}
      {count > 0 && (
        <button type="button" className="btn btn-ghost btn-small" onClick={clearFilters}>
          Clear filters ({count})
        </button>
      )}
    </div>
  );
}
