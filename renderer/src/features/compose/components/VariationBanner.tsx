import { MAX_SOURCE_VARIATIONS, useCompose } from '../../../stores/compose/index.ts';

/**
 * Shown while Compose is set to make variations of a library video (Library → "Make variations ×N"):
 * which video, how many (1–4, one `POST /videos/variations`), and a way back to an ordinary generation.
 */
export function VariationBanner() {
  const source = useCompose((s) => s.variationOf);
  if (!source) return null;
  const { setVariationCount, setVariationOf } = useCompose.getState();
  return (
    <div className="notice notice-info row" role="status" aria-label="Variations" style={{ gap: 8 }}>
      <span className="grow">
        Making variations of “{source.name}”: new seeds, the same model; the prompt below replaces the source’s if you
        change it.
      </span>
      <label htmlFor="variation-count">Videos</label>
      <select
        id="variation-count"
        className="select"
        style={{ width: 64, padding: '4px 6px' }}
        value={source.count}
        onChange={(e) => setVariationCount(Number(e.target.value))}
      >
        {Array.from({ length: MAX_SOURCE_VARIATIONS }, (_, i) => i + 1).map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <button type="button" className="btn btn-small" onClick={() => setVariationOf(null)}>
        Cancel variations
      </button>
    </div>
  );
}
