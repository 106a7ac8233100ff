import type { z } from 'zod';
import { ApiError } from './errors.ts';

/** Parses with a zod schema; a failure is a 400 naming the first offending field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  throw new ApiError('invalid_request_error', `${field}: ${issue?.message ?? 'invalid value'}`);
}
