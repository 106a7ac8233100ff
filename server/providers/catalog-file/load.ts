import type { z } from 'zod';
import { INTERFACE_PARAMETERS } from '../../../shared/api/index.ts';
import type { ModelParameters } from '../../../shared/api/index.ts';
import type { ModelDefinition } from '../model-definitions.ts';
import { videoDefaultSize } from '../model-definitions.ts';
import type { RemoteProviderId } from '../remote/contract.ts';
import { REMOTE_PROVIDER_IDS } from '../remote/contract.ts';
import type { ProviderOffer } from '../types.ts';
import type { Sql } from '../../storage/sql/types.ts';
import { operatorCatalogStore } from './operator-store.ts';
import { JsonSyntaxError, parseJsonWithPositions, positionOf } from './json-positions.ts';
import type { ParsedJson } from './json-positions.ts';
import builtin from './models.json' with { type: 'json' };
import { CatalogFile, CatalogModel, CatalogOffer, OperatorCatalogFile } from './schema.ts';

/** The operator's catalog file in the data directory: merged over the built-in one at start. */
export { OPERATOR_CATALOG_FILE } from './operator-store.ts';

/** A catalog file that does not parse or does not fit the schema; the service refuses to start. */
export class CatalogFileError extends Error {
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
  constructor(file: string, message: string, where?: { line: number; column: number }) {
    super(where ? `${file}:${where.line}:${where.column}: ${message}` : `${file}: ${message}`);
    this.name = 'CatalogFileError';
    this.file = file;
    if (where) {
      this.line = where.line;
      this.column = where.column;
    }
  }
}

/** What the service routes over: the AI models and, per remote provider, its offers. */
export interface LoadedCatalog {
  models: ModelDefinition[];
  offers: Record<RemoteProviderId, ProviderOffer[]>;
}

/** The built-in catalog, validated (a bad built-in file is a bug, caught by its unit test). */
export function builtinCatalog(): CatalogFile {
  const parsed = CatalogFile.safeParse(builtin);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CatalogFileError('server/providers/catalog-file/models.json', describeIssue(issue));
  }
  return parsed.data;
}

/** Parses the operator's file text; errors name the file, line and column. */
export function parseOperatorCatalog(text: string, file: string): { file: string; parsed: ParsedJson } {
  try {
    return { file, parsed: parseJsonWithPositions(text) };
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      throw new CatalogFileError(file, `not valid JSON: ${error.message}`, error.position);
    throw error;
  }
}

/**
 * The built-in catalog with the operator's (`DATA/catalog.json`, or on PostgreSQL the database's, when there is one) merged
 * over it, turned into model definitions and offers. Throws CatalogFileError with the file and
 * line for anything wrong in the operator's file.
 */
export async function loadCatalog(dataDir: string, db?: Sql): Promise<LoadedCatalog> {
  // On PostgreSQL the nodes share the operator catalog in the database (operator-store.ts).
  const found = await operatorCatalogStore(dataDir, db).read();
  const base = builtinCatalog();
  const merged = found === undefined ? base : mergeOperatorCatalog(base, parseOperatorCatalog(found.text, found.where));
  return toDefinitions(merged);
}

/** Merges the operator's models over the built-in ones (by id; their offers by provider). */
export function mergeOperatorCatalog(base: CatalogFile, operator: { file: string; parsed: ParsedJson }): CatalogFile {
  const { file, parsed } = operator;
  const fail = (path: Array<string | number>, message: string): never => {
    throw new CatalogFileError(file, message, positionOf(parsed, path));
  };
  const patch = checked(OperatorCatalogFile, parsed.value, [], fail);

  const models = base.models.map((m) => ({ ...m, offers: [...m.offers] }));
  /** Where in the operator's file each model it names is, for errors found after merging. */
  const origins = new Map<string, Array<string | number>>();
  for (const [i, entry] of patch.models.entries()) {
    const at: Array<string | number> = ['models', i];
    if (entry.id.startsWith('clipdesk/'))
      fail([...at, 'id'], `${entry.id}: the procedural clipdesk models are built in`);
    const index = models.findIndex((m) => m.id === entry.id);
    if (origins.has(entry.id)) fail([...at, 'id'], `${entry.id} appears twice`);
    origins.set(entry.id, at);
    if (index === -1) {
      // A new model must be complete: checked on its own so errors point into it.
      models.push(checked(CatalogModel, rawAt(parsed.value, at), at, fail));
      continue;
    }
    const current = models[index] as CatalogModel;
    const offers = [...current.offers];
    for (const [k, offer] of (entry.offers ?? []).entries()) {
      const offerAt = [...at, 'offers', k];
      const existing = offers.findIndex((o) => o.provider === offer.provider);
      if (existing === -1) {
        offers.push(checked(CatalogOffer, rawAt(parsed.value, offerAt), offerAt, fail));
        continue;
      }
      const kept = { ...offers[existing] } as Partial<CatalogOffer>;
      if (offer.price !== undefined) {
        // The operator's own price: the built-in note about how the old one was found no longer applies.
        if (offer.priceAsOf === undefined)
          fail([...offerAt, 'price'], 'a changed price needs its priceAsOf (YYYY-MM-DD)');
        delete kept.unverified;
        // A table read with the old price would still price every request (docs/providers.md, "Prices").
        if (offer.prices === undefined) delete kept.prices;
      }
      offers[existing] = checked(CatalogOffer, { ...kept, ...stripUndefined(offer) }, offerAt, fail);
    }
    const parameters = checked(
      CatalogModel.shape.parameters,
      { ...current.parameters, ...(entry.parameters ?? {}) },
      [...at, 'parameters'],
      fail,
    );
    const { offers: _o, parameters: _p, ...fields } = stripUndefined(entry);
    models[index] = { ...current, ...fields, parameters, offers };
  }
  const merged: CatalogFile = { ...base, models };
  checkConsistency(merged, (id, message) => {
    const origin = origins.get(id);
    if (origin) fail(origin, message);
    throw new CatalogFileError('server/providers/catalog-file/models.json', message);
  });
  return merged;
}

/** Rules zod cannot express: offers agree with their model, and each provider appears once. */
export function checkConsistency(file: CatalogFile, fail: (modelId: string, message: string) => never): void {
  const seen = new Set<string>();
  for (const m of file.models) {
    if (seen.has(m.id)) fail(m.id, `${m.id} appears twice`);
    seen.add(m.id);
    const own = ownParameters(m.parameters);
    const sizes = m.parameters.size?.values;
    const duration = m.parameters.duration;
    const providers = new Set<string>();
    for (const o of m.offers) {
      const where = `${m.id}: offer of ${o.provider}`;
      if (providers.has(o.provider)) fail(m.id, `${where} appears twice`);
      providers.add(o.provider);
      const base = m.media === 'image' ? ['text_to_image'] : ['text_to_video', 'image_to_video'];
      if (!o.features.some((f) => base.includes(f)))
        fail(m.id, `${where} needs one of the features ${base.join(', ')}`);
      if (m.media === 'video' && sizes && !o.sizes.every((s) => sizes.includes(s)))
        fail(m.id, `${where} lists sizes the model does not have (model sizes: ${sizes.join(', ')})`);
      if (m.media === 'video' && !duration) fail(m.id, `${m.id}: a video model needs parameters.duration`);
      if (duration && o.durations?.some((d) => d < duration.min || d > duration.max))
        fail(m.id, `${where} lists durations outside the model's ${duration.min} to ${duration.max} seconds`);
      const unknown = (o.parameters ?? []).filter((p) => !own.includes(p));
      if (unknown.length > 0)
        fail(
          m.id,
          `${where} honours ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} not among the model's parameters`,
        );
      if (typeof o.path !== 'string') {
        for (const f of o.features) {
          if ((f === 'text_to_video' || f === 'image_to_video' || f === 'text_to_image') && !o.path[f])
            fail(m.id, `${where} has the feature ${f} but no path for it`);
        }
      }
    }
  }
}

/** The model's own parameters: everything in its rules that is not a field of the interface. */
export function ownParameters(parameters: ModelParameters): string[] {
  return Object.keys(parameters).filter((k) => !(INTERFACE_PARAMETERS as readonly string[]).includes(k));
}

export function toDefinitions(file: CatalogFile): LoadedCatalog {
  const offers = Object.fromEntries(REMOTE_PROVIDER_IDS.map((id) => [id, [] as ProviderOffer[]])) as Record<
    RemoteProviderId,
    ProviderOffer[]
  >;
  const models: ModelDefinition[] = file.models.map((m) => {
    const [base = '', slug = ''] = m.id.split('/');
    for (const o of m.offers) {
      offers[o.provider].push({
        model: m.id,
        price: o.price,
        ...(o.prices ? { prices: o.prices.map((p) => ({ ...p })) } : {}),
        features: [...o.features],
        sizes: [...o.sizes],
        path: typeof o.path === 'string' ? o.path : { ...o.path },
        ...(o.durations ? { durations: [...o.durations] } : {}),
        parameters: [...(o.parameters ?? [])],
        ...(o.inputs ? { inputs: o.inputs } : {}),
        ...(o.inputSchemas ? { inputSchemas: o.inputSchemas } : {}),
        priceAsOf: o.priceAsOf,
        priceSource: o.priceSource,
        ...(o.unverified !== undefined ? { priceNote: o.unverified } : {}),
      });
    }
    return {
      id: m.id,
      base,
      slug,
      name: m.name,
      description: m.description,
      media: m.media,
      versions: [...(m.versions ?? ['1'])],
      parameters: withDefaultSize(m.media, m.parameters),
    };
  });
  return { models, offers };
}

/** A video model whose file names no default size gets the rule's (videoDefaultSize), so its record shows it. */
function withDefaultSize(media: 'video' | 'image', parameters: ModelParameters): ModelParameters {
  const size = parameters.size;
  if (media !== 'video' || !size || size.default !== undefined) return parameters;
  return { ...parameters, size: { ...size, default: videoDefaultSize(size.values) } };
}

function checked<S extends z.ZodType>(
  schema: S,
  value: unknown,
  at: Array<string | number>,
  fail: (path: Array<string | number>, message: string) => never,
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = [...at, ...(issue?.path ?? []).map((p) => (typeof p === 'number' ? p : String(p)))];
  return fail(path, describeIssue(issue, path));
}

function describeIssue(
  issue: z.core.$ZodIssue | undefined,
  path: Array<string | number> = [...(issue?.path ?? [])].map((p) => (typeof p === 'number' ? p : String(p))),
): string {
  if (!issue) return 'does not fit the catalog schema';
  const where = path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .replace(/^\./, '');
  return `${where || 'the file'}: ${issue.message}`;
}

function rawAt(value: unknown, path: Array<string | number>): unknown {
  let v: unknown = value;
  for (const p of path) v = (v as Record<string | number, unknown> | undefined)?.[p];
  return v;
}

function stripUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
