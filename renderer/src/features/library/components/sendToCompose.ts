import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { useShell } from '../../../lib/shell/index.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { useStage } from '../../../stores/stage/index.ts';
import { thumbnailUrl } from '../../../stores/library/selectors.ts';

// From a Library item back to Compose: each hands Compose what it needs, then shows it.

/** Opening a take from the Library puts it on the canvas's stage (docs/workflows.md, "The canvas"). */
export function showOnStage(entry: LibraryItem): void {
  useStage.getState().showItem(entry);
  useShell.getState().go('compose');
}

/** An image becomes the start frame of a new video. */
export function startFromImage(entry: LibraryItem): void {
  const { item } = entry;
  useCompose.getState().setMedia('video');
  useCompose.getState().setStartFrame({
    source: 'library',
    mediaId: item.id,
    name: item.prompt.slice(0, 60) || item.id,
    previewUrl: thumbnailUrl(entry) ?? item.url,
  });
  useShell.getState().go('compose');
}

/** A video's last frame (extracted by main) starts the next video, to chain shots. */
export async function startFromLastFrame(entry: LibraryItem): Promise<void> {
  const { item } = entry;
  const file = await useLibrary.getState().useLastFrame(item.id);
  if (!file) return;
  useCompose.getState().setMedia('video');
  useCompose.getState().setStartFrame({
    source: 'library',
    mediaId: item.id,
    name: `Last frame of “${item.prompt.slice(0, 40)}”`,
    previewUrl: file.url,
    lastFramePath: file.path,
  });
  useShell.getState().go('compose');
}

/**
 * "Continue this shot" (docs/workflows.md): Compose with the same model and settings, the video's last frame
 * (its out point when the shot is used trimmed in its chain) as the start frame, and the video
 * recorded as the new shot's parent, so the result joins its chain right after it.
 */
export async function continueShot(entry: LibraryItem): Promise<void> {
  const { item } = entry;
  const file = await useLibrary.getState().useLastFrame(item.id);
  if (!file) return;
  regenerate(entry);
  useCompose.getState().setStartFrame({
    source: 'library',
    mediaId: item.id,
    name: `Continues “${item.prompt.slice(0, 40)}”${entry.chain ? ` (shot ${entry.chain.position})` : ''}`,
    previewUrl: file.url,
    lastFramePath: file.path,
    continues: item.id,
  });
}

/**
 * "Make variations ×N" (docs/workflows.md): Compose prefilled with the video's prompt and model, set to make
 * `count` variations of it through `POST /videos/variations`.
 */
export function makeVariations(entry: LibraryItem, count: number): void {
  regenerate(entry);
  useStage.getState().showItem(entry);
  useCompose.getState().setVariationOf({
    mediaId: entry.item.id,
    name: entry.item.prompt.slice(0, 60) || entry.item.id,
    count,
  });
}

/** Compose again with the item's prompt, model and settings. */
export function regenerate(entry: LibraryItem): void {
  const { item } = entry;
  const isVideo = item.media === 'video';
  const model = useModels.getState().models.find((m) => `${m.base}/${m.slug}` === item.model || m.id === item.model);
  useCompose.getState().applySettings({
    media: isVideo ? 'video' : 'image',
    prompt: item.prompt,
    modelId: model?.id ?? null,
    params: { ...(isVideo ? { duration: item.duration } : {}), size: item.size, public: item.public ?? false },
    provider: null,
  });
  useShell.getState().go('compose');
}
