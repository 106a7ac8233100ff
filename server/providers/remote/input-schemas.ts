import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import fal from '../catalog-file/input-schemas/fal.json' with { type: 'json' };
import google from '../catalog-file/input-schemas/google.json' with { type: 'json' };
import luma from '../catalog-file/input-schemas/luma.json' with { type: 'json' };
import replicate from '../catalog-file/input-schemas/replicate.json' with { type: 'json' };
import runway from '../catalog-file/input-schemas/runway.json' with { type: 'json' };
import { ProviderError } from './contract.ts';
import type { RemoteProviderId } from './contract.ts';

/**
 * Each model's input schema, the source of truth for what a provider accepts (docs/providers.md,
 * "Request schemas"). The built-in catalog's schemas ship in `catalog-file/input-schemas/`, each with
 * the page it was read from and the day; a synced model carries the schema its provider's OpenAPI
 * document gave. Every body is checked before it is submitted, so a value the provider would refuse
 * never becomes a paid (or failed) job, and the contract fakes refuse with the same schemas.
 */

/** One model's schema, as the files keep it. */
export interface InputSchemaEntry {
  source: string;
  checked: string;
  note?: string;
  /** Documented substitutions: field → {value sent → value the model takes}. */
  mappings?: Record<string, Record<string, unknown>>;
  schema: object;
}

interface SchemaFile {
  models: Record<string, InputSchemaEntry>;
}

const SHIPPED: Partial<Record<RemoteProviderId, SchemaFile>> = { fal, replicate, google, runway, luma };

/** The provider's name as messages say it. */
const NAMES: Record<RemoteProviderId, string> = {
  fal: 'fal',
  replicate: 'Replicate',
  google: 'Google Gemini API',
  runway: 'Runway',
  luma: 'Luma',
  openai: 'OpenAI',
};

/**
 * One Ajv and each schema compiled once, by the schema object: compiling is milliseconds, a
 * check of a compiled one microseconds (docs/benchmarks.md, provider adapters).
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new WeakMap<object, ValidateFunction>();
/** A schema Ajv cannot compile (a provider's listing may carry one) checks nothing, rather than block the model. */
const ACCEPT_ALL = ajv.compile({});

function validatorOf(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch {
      validate = ACCEPT_ALL;
    }
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * A body the model's schema refuses, found before anything was sent: another provider of the
 * model may take it (routing falls back), and if none does the request is a 400.
 */
export class InputSchemaRefusal extends ProviderError {
  constructor(provider: RemoteProviderId, message: string) {
    super(provider, 'invalid_input', message);
    this.name = 'InputSchemaRefusal';
  }
}

/** The shipped schema of a model path at a provider, if the repo has one. */
export function shippedInputSchema(provider: RemoteProviderId, path: string): InputSchemaEntry | undefined {
  const file = SHIPPED[provider];
  return file && Object.hasOwn(file.models, path) ? file.models[path] : undefined;
}

/** Every shipped model path of a provider (the property tests and the fakes read them). */
export function shippedInputPaths(provider: RemoteProviderId): string[] {
  return Object.keys(SHIPPED[provider]?.models ?? {});
}

/** What in a body a schema refuses: the field (dotted path), the value, and the allowed values when it lists them. */
export interface InputProblem {
  field: string;
  message: string;
  value?: unknown;
  allowed?: unknown[];
}

/** The problems of `body` against `schema` (empty when it validates). */
export function inputProblems(schema: object, body: unknown): InputProblem[] {
  const validate = validatorOf(schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).flatMap((error) => problemOf(error, body));
}

function problemOf(error: ErrorObject, body: unknown): InputProblem[] {
  // `if` and `anyOf` only summarise the errors listed beside them.
  if (error.keyword === 'if' || error.keyword === 'anyOf') return [];
  const segments = error.instancePath.split('/').slice(1);
  if (error.keyword === 'required')
    segments.push(String((error.params as { missingProperty: string }).missingProperty));
  const field = segments.join('.') || '(body)';
  const value = error.keyword === 'required' ? undefined : valueAt(body, segments);
  const allowed =
    error.keyword === 'enum' ? ((error.params as { allowedValues?: unknown[] }).allowedValues ?? undefined) : undefined;
  return [
    {
      field,
      message: error.keyword === 'required' ? 'is required' : (error.message ?? 'is not valid'),
      ...(value === undefined ? {} : { value }),
      ...(allowed ? { allowed } : {}),
    },
  ];
}

function valueAt(body: unknown, segments: string[]): unknown {
  let at: unknown = body;
  for (const segment of segments) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return at;
}

/** "aspect_ratio '1:1' is not allowed (allowed: 16:9, 9:16)": a problem as a client reads it. */
export function describeProblem(problem: InputProblem): string {
  if (problem.value === undefined) return `${problem.field} ${problem.message}`;
  const shown = typeof problem.value === 'string' ? `'${problem.value}'` : JSON.stringify(problem.value);
  const allowed = problem.allowed ? ` (allowed: ${problem.allowed.map(String).join(', ')})` : ` (${problem.message})`;
  return `${problem.field} ${shown} is not accepted${allowed}`;
}

/**
 * The body to submit: checked against the model's schema (the one given, else the shipped one;
 * no schema, no check). A refused top-level value with a documented mapping is replaced by its
 * mapping (docs/providers.md, "Request schemas"); anything else refused throws
 * `ProviderError('invalid_input')` naming the field and its allowed values, which the service
 * answers with a 400 before anything is paid.
 */
export function checkedInput<T extends object>(
  provider: RemoteProviderId,
  path: string,
  body: T,
  entry: Pick<InputSchemaEntry, 'schema' | 'mappings'> | undefined = shippedInputSchema(provider, path),
): T {
  if (!entry) return body;
  let problems = inputProblems(entry.schema, body);
  if (problems.length === 0) return body;
  const mapped = applyMappings(body, problems, entry.mappings);
  if (mapped !== body) {
    problems = inputProblems(entry.schema, mapped);
    if (problems.length === 0) return mapped;
  }
  const said = problems.map(describeProblem).join('; ');
  throw new InputSchemaRefusal(provider, `${NAMES[provider]} (${path}) would refuse this request: ${said}`);
}

function applyMappings<T extends object>(body: T, problems: InputProblem[], mappings: InputSchemaEntry['mappings']): T {
  if (!mappings) return body;
  let out = body;
  for (const { field, value } of problems) {
    const table = mappings[field];
    if (!table || typeof value !== 'string' || !Object.hasOwn(table, value)) continue;
    out = { ...out, [field]: table[value] };
  }
  return out;
}

/** The values a schema lists for the property at `field` (a path of names), if it lists them. */
function enumAt(schema: object | undefined, field: string[]): unknown[] | undefined {
  let at: unknown = schema;
  for (const name of field) {
    const properties = (at as { properties?: Record<string, unknown> } | undefined)?.properties;
    at = properties?.[name];
  }
  const values = (at as { enum?: unknown } | undefined)?.enum;
  return Array.isArray(values) ? values : undefined;
}

/** Where each provider's body names the frame shape. */
const RATIO_FIELD: Partial<Record<RemoteProviderId, string[]>> = {
  fal: ['aspect_ratio'],
  replicate: ['aspect_ratio'],
  luma: ['aspect_ratio'],
  google: ['parameters', 'aspectRatio'],
};

/**
 * The aspect ratios a provider's model takes for a task, as its schema lists them (a synced offer:
 * its `inputs`), or undefined when it names none (any ratio, or the start frame decides). Routing
 * sends a chosen ratio only to providers that take it.
 */
export function acceptedAspectRatios(
  provider: RemoteProviderId,
  path: string,
  syncedValues?: string[],
): string[] | undefined {
  if (syncedValues) return syncedValues;
  const field = RATIO_FIELD[provider];
  const values = field ? enumAt(shippedInputSchema(provider, path)?.schema, field) : undefined;
  // 'auto' (the frame's shape) and 'custom' (a size) are not shapes a creator picks.
  return values?.filter((v): v is string => typeof v === 'string' && v.includes(':'));
}
