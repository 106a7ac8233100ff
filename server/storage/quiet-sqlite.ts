/**
 * node:sqlite prints an ExperimentalWarning on first use. The service is a product, not a demo of
 * Node's flags: drop exactly that one warning and let every other warning through.
 */
let installed = false;

export function silenceSqliteWarning(): void {
  if (installed) return;
  installed = true;
  const original = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const name = typeof warning === 'string' ? type : warning.name;
    if (name === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    (original as (...args: unknown[]) => void)(warning, ...rest);
  });
}
