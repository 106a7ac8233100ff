/**
 * A small JSON Schema (2020-12) checker for the keywords zod's `z.toJSONSchema` emits, so tests can
 * hold real responses against the served OpenAPI document without another dependency.
 *
 * `closed: true` treats every object as closed: a property the schema does not name is an error
 * even where the schema allows extra ones. That is how a field the service sends but the schemas
 * (and so the document) do not describe fails a test.
 */
export type Schema = Record<string, unknown> | boolean;

export interface CheckOptions {
  /** Resolves a `$ref` such as `#/components/schemas/MediaItem`. */
  resolve: (ref: string) => Schema | undefined;
  closed?: boolean;
}

export function checkSchema(value: unknown, schema: Schema, options: CheckOptions, path = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value is allowed here`];
  const errors: string[] = [];
  const s = schema;
  if (typeof s.$ref === 'string') {
    const target = options.resolve(s.$ref);
    if (target === undefined) return [`${path}: unresolved $ref ${s.$ref}`];
    errors.push(...checkSchema(value, target, options, path));
  }
  if ('const' in s && !deepEqual(value, s.const)) errors.push(`${path}: expected ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value)))
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`);
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => hasType(value, t))) return [...errors, `${path}: expected ${types.join('|')}`];
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options_ = s[key];
    if (!Array.isArray(options_)) continue;
    const results = (options_ as Schema[]).map((o) => checkSchema(value, o, options, path));
    const passing = results.filter((r) => r.length === 0).length;
    if (passing === 0 || (key === 'oneOf' && passing > 1))
      errors.push(`${path}: matches ${passing} of ${key} (${results.map((r) => r[0] ?? 'ok').join('; ')})`);
  }
  if (Array.isArray(s.allOf)) for (const o of s.allOf as Schema[]) errors.push(...checkSchema(value, o, options, path));
  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && [...value].length < s.minLength) errors.push(`${path}: too short`);
    if (typeof s.maxLength === 'number' && [...value].length > s.maxLength) errors.push(`${path}: too long`);
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value))
      errors.push(`${path}: does not match ${s.pattern}`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) errors.push(`${path}: below ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) errors.push(`${path}: above ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum)
      errors.push(`${path}: not above ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum)
      errors.push(`${path}: not below ${s.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as Schema[]) : [];
    value.forEach((v, i) => {
      const item = prefix[i] ?? (s.items as Schema | undefined);
      if (item !== undefined) errors.push(...checkSchema(v, item, options, `${path}[${i}]`));
    });
    if (typeof s.minItems === 'number' && value.length < s.minItems) errors.push(`${path}: too few items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) errors.push(`${path}: too many items`);
  }
  if (isObject(value)) {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    for (const name of (s.required ?? []) as string[])
      if (!(name in value)) errors.push(`${path}: missing required ${name}`);
    for (const [name, v] of Object.entries(value)) {
      const p = properties[name];
      if (p !== undefined) errors.push(...checkSchema(v, p, options, `${path}.${name}`));
      else if (isObject(s.additionalProperties) && Object.keys(s.additionalProperties).length > 0)
        errors.push(...checkSchema(v, s.additionalProperties, options, `${path}.${name}`));
      else if (
        s.additionalProperties === false ||
        (options.closed === true && (s.properties !== undefined || s.type === 'object'))
      )
        errors.push(`${path}.${name}: not described by the schema`);
    }
  }
  return errors;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
