/** Envelopes of the service's answers, as the resource calls read them (docs/api.md). */
import { z } from 'zod';
import { ServiceError } from './errors.ts';

/**
 * A single record: under `result` (docs/api.md, "Envelope of single records"), or under `data` — the
 * record itself or a one-element array — from servers that predate that decision. The legacy
 * shapes are moved under `result` first, so a failure names the field (`result.id`), not "body".
 */
export function singleRecord<T>(record: z.ZodType<T>): z.ZodType<T> {
  return z.preprocess(
    (body) => {
      if (typeof body !== 'object' || body === null || 'result' in body || !('data' in body)) return body;
      const data: unknown = body.data;
      const only: unknown = Array.isArray(data) && data.length === 1 ? data[0] : data;
      return { ...body, result: only };
    },
    z.looseObject({ success: z.literal(true), result: record }).transform((body) => body.result),
  );
}

/** A catalog list (`result.<field>` and `result.total`); a service that leaves `total` out has listed them all. */
export function listOf<T>(field: string, record: z.ZodType<T>): z.ZodType<{ total: number; items: T[] }> {
  const shape: Record<string, z.ZodType> = {
    total: z.number().int().nonnegative().optional(),
    [field]: z.array(record),
  };
  return z.looseObject({ success: z.literal(true), result: z.looseObject(shape) }).transform((body) => {
    const result = body.result as Record<string, unknown>;
    const items = result[field] as T[];
    return { total: typeof result['total'] === 'number' ? result['total'] : items.length, items };
  });
}

/** How a service answers a path it does not serve: 404, or 405 to a method it does not take there. */
export function isMissingEndpoint(error: unknown): boolean {
  return error instanceof ServiceError && (error.code === 'not_found_error' || error.status === 405);
}

/** A percent-encoded id (`acme%2Fmotion`) as the raw one. */
export function safeDecode(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

export const pageQuery = (q: { limit?: number; page?: number } | undefined): Record<string, number | undefined> => ({
  limit: q?.limit,
  page: q?.page,
});
