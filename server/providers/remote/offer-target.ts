import { offerPath } from '../model-definitions.ts';
import type { ProviderOffer } from '../types.ts';
import type { ProviderTask } from './contract.ts';

/**
 * Where a task goes at its provider, read off the offer routing chose: the model path for the
 * task's kind (text-to-video and image-to-video may be different endpoints), how a synced model
 * names the interface's fields in its input (inputs.ts), and the input schema its provider lists
 * for that path (input-schemas.ts), which the adapter checks the body against.
 */
export function offerTarget(
  offer: ProviderOffer,
  task: Pick<ProviderTask, 'kind' | 'startImage'>,
): Pick<ProviderTask, 'path' | 'inputs' | 'inputSchema'> {
  const which = task.kind === 'image' ? 'text_to_image' : task.startImage ? 'image_to_video' : 'text_to_video';
  const path = offerPath(offer, which) ?? offer.model;
  const schema = offer.inputSchemas?.[path];
  return { path, ...(offer.inputs ? { inputs: offer.inputs } : {}), ...(schema ? { inputSchema: { schema } } : {}) };
}
