import type { JobRequest } from '../../../../shared/ipc/index.ts';
import type { ModelRecord } from '../../../../shared/api/model-records.ts';
import type { ParameterValue } from '../../../../shared/api/model-parameters.ts';
import type { RoutingMode } from '../../../../shared/api/generations.ts';
import { modelIdParts } from '../models/selectors.ts';
import type { ComposeParams, StartFrame } from './initialState.ts';

/** What Compose is set to from an earlier job's request (Queue → Edit). */
export interface RestoredDraft {
  media: JobRequest['kind'];
  prompt: string;
  /** The model's record id, or null when the job's model is offered no more (`missingModel`). */
  modelId: string | null;
  /** The wire id of the job's model when it is offered no more: Compose then picks none in its place. */
  missingModel: string | null;
  version: string | null;
  provider: string | null;
  routing: RoutingMode;
  params: Partial<ComposeParams>;
  modelParams: Record<string, ParameterValue>;
  /** The job's start and end frames, sent again as the job sent them (a video's only). */
  startFrame: StartFrame | null;
  endFrame: StartFrame | null;
  /** What could not be restored, in one sentence; null when everything was. */
  notice: string | null;
}

/** The model a wire id names: `base/slug` (any case), or the record's own id. */
function findByWireId(models: readonly ModelRecord[], wireId: string): ModelRecord | undefined {
  const { key } = modelIdParts(wireId);
  const wanted = key.toLowerCase();
  return models.find((m) => `${m.base}/${m.slug}`.toLowerCase() === wanted || m.id === wireId);
}

/** Whether the model offers this provider (by id or slug); a model without offers lets the service route. */
function offersProvider(model: ModelRecord, provider: string): boolean {
  const offers = model.providers ?? [];
  if (offers.length === 0) return true;
  const wanted = provider.toLowerCase();
  return offers.some((o) => o.id.toLowerCase() === wanted || o.slug.toLowerCase() === wanted);
}

function paramsOf(request: JobRequest): Partial<ComposeParams> {
  const params: Partial<ComposeParams> = { public: request.public ?? false };
  if (request.duration !== undefined) params.duration = request.duration;
  if (request.size !== undefined) params.size = request.size;
  if (request.style !== undefined) params.style = request.style;
  if (request.aspect_ratio !== undefined) params.aspect_ratio = request.aspect_ratio;
  if (request.seed !== undefined) params.seed = request.seed;
  return params;
}

/** A frame of the job's request as the composer's slot holds it: named for what it is, sent again as it is. */
function frameOf(frame: JobRequest['startFrame'], slot: string): StartFrame | null {
  if (!frame) return null;
  const name =
    frame.kind === 'path'
      ? (frame.path.split(/[\\/]/).pop() ?? frame.path)
      : frame.kind === 'item'
        ? `Library item ${frame.itemId}`
        : `The job's ${slot}`;
  const previewUrl = frame.kind === 'url' || frame.kind === 'upload' ? frame.url : '';
  return { source: 'job', frame, name, previewUrl };
}

/**
 * The job's request as Compose's draft: its exact model, version, provider or routing mode and
 * parameters. `usable` are the models the picker offers (a provider with a key), `catalog` every
 * model the service lists; what either no longer has is named in `notice` rather than replaced.
 */
export function restoreRequest(
  request: JobRequest,
  usable: readonly ModelRecord[],
  catalog: readonly ModelRecord[],
  loadError: string | null = null,
): RestoredDraft {
  const { version } = modelIdParts(request.model);
  const model = findByWireId(usable, request.model);
  const base = {
    media: request.kind,
    prompt: request.prompt,
    routing: request.routing ?? 'optimal',
    params: paramsOf(request),
    modelParams: { ...(request.parameters ?? {}) },
    startFrame: request.kind === 'video' ? frameOf(request.startFrame, 'start frame') : null,
    endFrame: request.kind === 'video' ? frameOf(request.endFrame, 'end frame') : null,
  };
  if (!model) {
    if (loadError !== null) {
      return {
        ...base,
        modelId: null,
        missingModel: request.model,
        version: null,
        provider: null,
        notice: `Could not load the models to restore ${request.model} (${loadError}): retry the model list, then pick it.`,
      };
    }
    const listed = findByWireId(catalog, request.model) !== undefined;
    const why = listed ? 'no provider with a key offers it now' : 'the service no longer lists it';
    return {
      ...base,
      modelId: null,
      missingModel: request.model,
      version: null,
      provider: null,
      notice: `The model ${request.model} this job used is no longer available (${why}): pick another to try again.`,
    };
  }
  const problems: string[] = [];
  const versionGone = version !== null && model.versions !== undefined && !model.versions.includes(version);
  if (versionGone)
    problems.push(`version ${version} of ${model.name} is no longer offered, so the latest (${model.version}) is set`);
  const providerGone = request.provider !== undefined && !offersProvider(model, request.provider);
  if (providerGone) problems.push(`provider ${request.provider} no longer offers it, so routing chooses`);
  return {
    ...base,
    modelId: model.id,
    missingModel: null,
    version: versionGone ? null : version,
    provider: providerGone ? null : (request.provider ?? null),
    notice: problems.length === 0 ? null : `Not as the job had it: ${problems.join('; ')}.`,
  };
}
