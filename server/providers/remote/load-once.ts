/**
 * A loader that runs `load` on its first call and hands every later call the same promise. The
 * adapters load their provider's SDK through one, on first use: importing all six SDKs costs each
 * start of the service about half a CPU-second, and most services use few providers or none
 * (docs/providers.md, "SDKs load on first use").
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}
