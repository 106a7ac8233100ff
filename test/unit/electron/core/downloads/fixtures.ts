import type { MediaItem } from '../../../../../shared/api/index.ts';

/** The media item the download tests fetch from their loopback server at `origin`. */
export function downloadItem(origin: string, bytes: number): MediaItem {
  return {
    id: 'med_1',
    url: `${origin}/files/med_1.mp4`,
    mime: 'video/mp4',
    user: 'u',
    media: 'video',
    model: 'local/mosaic',
    provider: 'p',
    prompt: 'a red fox',
    size: '360p',
    duration: 2,
    createdAt: '2026-02-03T04:05:06.000Z',
    modelSlug: 'local/mosaic:1',
    providerName: 'P',
    bytes,
  };
}
