import type { JobRequestInput } from '../../../../shared/ipc/index.ts';
import { submitJobRequest } from '../compose/api.ts';
import { useCompose } from '../compose/index.ts';
import { useLibrary } from '../library/index.ts';
import { thumbnailUrl } from '../library/selectors.ts';
import { useModels } from '../models/index.ts';
import { toastError } from '../toasts/index.ts';
import { useStage, type Take } from './index.ts';

// The stage's actions on a take (docs/workflows.md, "The canvas"). Each costly one goes through the
// one submit route (compose/api.ts) and its takes join the session without a screen change.

/** The same settings as the take, for one more: its job's request, else what its item records. */
export function takeRequest(take: Pick<Take, 'job' | 'item'>): JobRequestInput | null {
  if (take.job) return { ...take.job.request };
  const item = take.item?.item;
  if (!item) return null;
  const video = item.media === 'video';
  return {
    kind: video ? 'video' : 'image',
    model: item.model,
    prompt: item.prompt,
    ...(item.size ? { size: item.size } : {}),
    ...(video && item.duration > 0 ? { duration: item.duration } : {}),
  };
}

/** Re-roll: the same request with a new seed (none sent, so the service picks one). */
export function rerollRequest(take: Pick<Take, 'job' | 'item'>): JobRequestInput | null {
  const request = takeRequest(take);
  if (!request) return null;
  const { seed: _seed, ...rest } = request;
  return rest;
}

/** N variations of a finished video take: one job through `POST /videos/variations`. */
export function variationsRequest(take: Pick<Take, 'job' | 'item'>, n: number): JobRequestInput | null {
  const item = take.item?.item;
  if (!item || item.media !== 'video') return null;
  return {
    kind: 'video',
    model: take.job?.request.model ?? item.model,
    prompt: item.prompt,
    variationOf: item.id,
    variations: n,
  };
}

async function send(what: string, request: JobRequestInput | null, show: boolean): Promise<void> {
  if (!request) return;
  const stage = useStage.getState();
  stage.setBusy(what);
  try {
    stage.addJobs(await submitJobRequest(request), show);
  } catch (error) {
    toastError(what === 'variations' ? 'Could not make variations' : 'Could not re-roll', error);
  } finally {
    useStage.getState().setBusy(null);
  }
}

export function reroll(take: Take): Promise<void> {
  return send('reroll', rerollRequest(take), true);
}

/** The variations stack under their source in the filmstrip; the stage stays on the source. */
export function makeVariations(take: Take, n: number): Promise<void> {
  return send('variations', variationsRequest(take, n), false);
}

/** A video take's last frame (extracted by main), or an image take itself, as the composer's start frame. */
async function takeAsStartFrame(take: Pick<Take, 'item'>, continues: boolean): Promise<boolean> {
  const entry = take.item;
  if (!entry) return false;
  const { item } = entry;
  const compose = useCompose.getState();
  if (item.media === 'image') {
    compose.setMedia('video');
    compose.setStartFrame({
      source: 'library',
      mediaId: item.id,
      name: item.prompt.slice(0, 60) || item.id,
      previewUrl: thumbnailUrl(entry) ?? item.url,
    });
    return true;
  }
  const file = await useLibrary.getState().useLastFrame(item.id);
  if (!file) return false;
  compose.setMedia('video');
  compose.setStartFrame({
    source: 'library',
    mediaId: item.id,
    name: `Last frame of “${item.prompt.slice(0, 40)}”`,
    previewUrl: file.url,
    lastFramePath: file.path,
    ...(continues ? { continues: item.id } : {}),
  });
  return true;
}

/**
 * Extend: the take's model and settings, its last frame in the start-frame slot (the next shot
 * continues it, in its chain), and the prompt focused for the next shot's words.
 */
export async function extend(take: Pick<Take, 'job' | 'item'>): Promise<void> {
  const request = takeRequest(take);
  if (!take.item || take.item.item.media !== 'video' || !request) return;
  const model = useModels
    .getState()
    .models.find((m) => `${m.base}/${m.slug}` === request.model || m.id === request.model);
  useCompose.getState().applySettings({
    media: 'video',
    prompt: request.prompt,
    modelId: model?.id ?? useCompose.getState().modelId,
    params: {
      ...(request.duration !== undefined ? { duration: request.duration } : {}),
      ...(request.size ? { size: request.size } : {}),
    },
    provider: null,
  });
  if (await takeAsStartFrame(take, true)) useStage.getState().focusPrompt();
}

export async function putAsStartFrame(take: Take): Promise<void> {
  if (await takeAsStartFrame(take, false)) useStage.getState().focusPrompt();
}

export async function toggleFavourite(take: Take): Promise<void> {
  const entry = take.item;
  if (!entry) return;
  const favourite = !entry.favourite;
  useStage.getState().remember([{ ...entry, favourite }]);
  await useLibrary.getState().setFavourite([entry.item.id], favourite);
}

export function downloadTake(take: Take): Promise<void> {
  return take.itemId ? useLibrary.getState().download([take.itemId]) : Promise.resolve();
}
