import type { GenerationInput } from '../core/jobs/index.ts';
import { END_IMAGE_PARAMETER } from '../../shared/api/model-parameters.ts';
import type { JobRequest } from '../../shared/ipc/schemas/jobs.ts';

/**
 * The v1 body a job request sends: the v1 request plus the app's fields taken out. `imageUrl` is
 * the start frame's URL when it is known now (a local file gets its URL when the queue uploads it).
 * The routing preview (submit-route.ts) builds its body here too, so it cannot drift. `endImageUrl`
 * is the end frame's URL, under the model's image parameter `end_image_url` (docs/api.md).
 */
export function v1Body(r: JobRequest, imageUrl: string | undefined, endImageUrl?: string): GenerationInput {
  // parentItemId (a shot chain's parent) is the app's own: the service would take it for an unknown parameter.
  const {
    kind,
    startFrame: _startFrame,
    endFrame: _endFrame,
    parentItemId: _parent,
    duration,
    variationOf,
    variations,
    parameters,
    ...request
  } = r;
  return {
    // The model's own parameters are fields of the v1 request ("Models may accept further
    // parameters of their own", docs/api.md); their names never shadow a field (RESERVED_PARAMETER_NAMES).
    ...parameters,
    ...request,
    ...(kind === 'video' && duration !== undefined ? { duration } : {}),
    ...(imageUrl !== undefined ? { image_url: imageUrl } : {}),
    ...(endImageUrl !== undefined ? { [END_IMAGE_PARAMETER]: endImageUrl } : {}),
    // One generation makes all the variations (the service gives each a new seed).
    ...(variationOf ? { n: variations ?? 1 } : {}),
  };
}
