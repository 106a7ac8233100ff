/**
 * One line per figure, the format every benchmark prints:
 *   bench NAME: VALUE UNIT (ratio R vs COMPARATOR)
 * The ratio is our figure divided by the comparator's figure in the same unit, both measured in the
 * same run: machines are noisy, so absolute numbers say little on their own.
 */
export function reportFigure(name: string, value: number, unit: string, ratio: number, comparator: string): void {
  console.log(`bench ${name}: ${format(value)} ${unit} (ratio ${ratio.toFixed(2)} vs ${comparator})`);
}

function format(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

/** p-th percentile (0–100) of samples, by nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Wall time of fn in milliseconds. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
