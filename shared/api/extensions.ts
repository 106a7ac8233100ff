import type { z } from 'zod';

/**
 * The two layers of a record another v1 service sends (docs/api.md "What the client needs from a
 * service"): the spec's layer is required and parsed strictly; each extension field is parsed on
 * its own, so a missing one is simply absent and a malformed one is dropped with one line in the
 * log, never failing the call. Unknown fields are kept.
 */

/** Told once per dropped extension field (the caller decides where the line goes and dedupes). */
export type ExtensionNote = (line: string) => void;

type Shape = Record<string, z.ZodType>;
type Extensions<S extends Shape> = { [K in keyof S]?: z.infer<S[K]> };

/**
 * The record with every extension of `shape` that is present and valid; invalid ones are removed
 * (and noted as `where.field`), absent ones stay absent. Other fields are passed through.
 */
export function withExtensions<S extends Shape>(
  record: Record<string, unknown>,
  shape: S,
  where: string,
  note: ExtensionNote,
): Record<string, unknown> & Extensions<S> {
  const out: Record<string, unknown> = { ...record };
  for (const [field, schema] of Object.entries(shape)) {
    if (record[field] === undefined) continue;
    const parsed = schema.safeParse(record[field]);
    if (parsed.success) out[field] = parsed.data;
    else {
      delete out[field];
      const issue = parsed.error.issues[0];
      const at = [where, field, ...(issue?.path ?? [])].join('.');
      note(`ignored ${at} (${issue?.message ?? 'invalid'}): the service's extension does not match Clipdesk's`);
    }
  }
  return out as Record<string, unknown> & Extensions<S>;
}

/** The schema's extension fields, made optional: how the client holds a record after withExtensions. */
export function optionalShape<S extends Shape>(shape: S): { [K in keyof S]: z.ZodOptional<S[K]> } {
  return Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof S]: z.ZodOptional<S[K]>;
  };
}
