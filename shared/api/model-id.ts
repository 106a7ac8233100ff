/**
 * Model identifiers: `<base>/<model>[:<version>]` (spec, "Model identifier format").
 * Ids are case-insensitive and normalised to lower case; surrounding whitespace is ignored but
 * whitespace inside an id is an error, as is an empty part or more than one `/` or `:`.
 */
export interface ModelId {
  base: string;
  model: string;
  /** null when omitted: the caller resolves it to the latest version. */
  version: string | null;
}

export type ModelIdResult = { ok: true; id: ModelId } | { ok: false; error: string };

const PART = /^[a-z0-9][a-z0-9._-]*$/;
const MAX_LENGTH = 200;

export function parseModelId(input: string): ModelIdResult {
  const text = input.trim().toLowerCase();
  if (text.length === 0) return fail('model id is empty');
  if (text.length > MAX_LENGTH) return fail(`model id is longer than ${MAX_LENGTH} characters`);
  if (/\s/.test(text)) return fail('model id must not contain whitespace');

  const slash = text.split('/');
  if (slash.length !== 2) return fail('model id must have the form <base>/<model>[:<version>]');
  const [base = '', rest = ''] = slash;
  const colon = rest.split(':');
  if (colon.length > 2) return fail('model id may contain at most one ":" (before the version)');
  const [model = '', version] = colon;

  if (!PART.test(base)) return fail('model id is missing its base (or the base has invalid characters)');
  if (!PART.test(model)) return fail('model id is missing its model name (or it has invalid characters)');
  if (version !== undefined && !PART.test(version)) {
    return fail('model version is empty or has invalid characters');
  }
  return { ok: true, id: { base, model, version: version ?? null } };
}

export function formatModelId(id: ModelId): string {
  return id.version === null ? `${id.base}/${id.model}` : `${id.base}/${id.model}:${id.version}`;
}

function fail(error: string): ModelIdResult {
  return { ok: false, error };
}
