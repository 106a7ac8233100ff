import { useMemo } from 'react';
import type { ModelRecord, ProviderRecord } from '../../../../../shared/api/model-records.ts';
import { PRICE_UNKNOWN } from '../../../../../shared/api/spec-rules.ts';
import { formatUnitPrice } from '../../../lib/format.ts';
import { useModels } from '../../../stores/models/index.ts';
import {
  allCapabilities,
  capabilityLabel,
  filterModels,
  offerPriceText,
  priceRange,
  priceUnit,
  providerName,
} from '../../../stores/models/selectors.ts';
import { useCompose } from '../../../stores/compose/index.ts';

function priceText(model: ModelRecord): string {
  if (!model.providers) return PRICE_UNKNOWN;
  const range = priceRange(model);
  if (!range) return 'No providers';
  const unit = priceUnit(model, model.providers?.[0]);
  return range.min === range.max ? formatUnitPrice(range.min, unit) : `from ${formatUnitPrice(range.min, unit)}`;
}

/** Who offers the model and at what price, cheapest first: `fal $0.050 / s · Replicate $0.070 / s`, or an offer's table. */
function offersText(model: ModelRecord, providers: readonly ProviderRecord[]): string {
  return [...(model.providers ?? [])]
    .sort((a, b) => a.price - b.price)
    .map((o) => `${providerName(providers, o)} ${offerPriceText(model, o)}`)
    .join(' · ');
}

export function ModelPicker({ selected }: { selected: ModelRecord | undefined }) {
  const media = useCompose((s) => s.media);
  const version = useCompose((s) => s.version);
  const selectModel = useCompose((s) => s.selectModel);
  const setVersion = useCompose((s) => s.setVersion);
  const status = useModels((s) => s.status);
  const error = useModels((s) => s.error);
  const models = useModels((s) => s.models);
  const providers = useModels((s) => s.providers);
  const search = useModels((s) => s.search);
  const capabilities = useModels((s) => s.capabilities);
  const setSearch = useModels((s) => s.setSearch);
  const toggleCapability = useModels((s) => s.toggleCapability);
  const visible = useMemo(
    () => filterModels({ models, search, capabilities }, media),
    [models, search, capabilities, media],
  );
  const caps = useMemo(() => allCapabilities(models, media), [models, media]);
  const offersUnknown = useMemo(() => models.some((m) => m.providers === undefined), [models]);

  const move = (step: 1 | -1) => {
    if (visible.length === 0) return;
    const at = visible.findIndex((m) => m.id === selected?.id);
    const next = visible[(at + step + visible.length) % visible.length];
    if (next) {
      selectModel(next);
      document.getElementById(`model-${next.id}`)?.scrollIntoView({ block: 'nearest' });
    }
  };

  return (
    <section className="panel" aria-labelledby="model-heading">
      <div className="panel-head">
        <h3 id="model-heading">Model</h3>
        {status === 'ready' && <span className="faint">{visible.length} shown</span>}
      </div>
      <input
        className="input"
        type="search"
        aria-label="Search models"
        placeholder="Search models"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      {caps.length > 0 && (
        <div className="row" role="group" aria-label="Capability filters">
          {caps.map((c) => (
            <button
              key={c}
              type="button"
              className="chip"
              aria-pressed={capabilities.includes(c)}
              onClick={() => toggleCapability(c)}
            >
              {capabilityLabel(c)}
            </button>
          ))}
        </div>
      )}
      {status === 'loading' && (
        <div aria-label="Loading models" role="status" className="model-list">
          {[0, 1, 2].map((i) => (
            <div key={i} className="skeleton" style={{ height: 44 }} />
          ))}
        </div>
      )}
      {status === 'error' && (
        <div className="notice notice-error" role="alert">
          <span className="grow">Could not load models: {error}</span>
          <button type="button" className="btn btn-small" onClick={() => void useModels.getState().load()}>
            Retry
          </button>
        </div>
      )}
      {status === 'ready' && offersUnknown && (
        <p className="faint" role="note">
          This service does not list offers or prices: the price is known after generation, and it routes each request
          itself.
        </p>
      )}
      {status === 'ready' && visible.length === 0 && (
        <p className="faint">No {media} models match. Clear the search or filters.</p>
      )}
      {status === 'ready' && visible.length > 0 && (
        <div
          className="model-list"
          role="listbox"
          aria-label="Model"
          tabIndex={0}
          aria-activedescendant={selected ? `model-${selected.id}` : undefined}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              move(e.key === 'ArrowDown' ? 1 : -1);
            }
          }}
        >
          {visible.map((m) => (
            <div
              key={m.id}
              id={`model-${m.id}`}
              role="option"
              aria-selected={m.id === selected?.id}
              aria-label={`${m.name} (${m.base}/${m.slug}), ${priceText(m)}${(m.providers?.length ?? 0) > 0 ? `, offered by ${offersText(m, providers)}` : ''}`}
              className="model-option"
              onClick={() => selectModel(m)}
            >
              <span className="name">{m.name}</span>
              <span className="badge badge-accent">{priceText(m)}</span>
              <span className="desc">
                {m.base}/{m.slug}
                {m.description === undefined ? '' : ` · ${m.description}`}
              </span>
            </div>
          ))}
        </div>
      )}
      {selected?.versions && selected.versions.length > 0 && (
        <label className="field">
          <span className="field-label">Version</span>
          <select
            className="select"
            aria-label="Version"
            value={version ?? ''}
            onChange={(e) => setVersion(e.target.value || null)}
          >
            <option value="">{selected.version === undefined ? 'Latest' : `Latest (${selected.version})`}</option>
            {selected.versions.map((v) => (
              <option key={v} value={v}>
                Pin {v}
              </option>
            ))}
          </select>
        </label>
      )}
    </section>
  );
}
