import type { MediaItem, MediaListQueryInput } from '../../../../../shared/api/index.ts';
import type { MediaSource } from '../../../../../electron/core/library/index.ts';

/** An in-memory `/media` for unit tests of the sync logic (integration tests use the real engine). */
export class FakeMediaSource implements MediaSource {
  items: MediaItem[] = [];
  requests: MediaListQueryInput[] = [];

  add(n: number, start: number, over: Partial<MediaItem> = {}): MediaItem[] {
    const made: MediaItem[] = [];
    for (let i = 0; i < n; i++) {
      const at = start + i * 1000;
      made.push(item(`m${String(at).padStart(14, '0')}`, at, over));
    }
    this.items.push(...made);
    return made;
  }

  remove(ids: string[]): void {
    this.items = this.items.filter((i) => !ids.includes(i.id));
  }

  listMedia(query: MediaListQueryInput = {}): Promise<{ total: number; medias: MediaItem[] }> {
    this.requests.push(query);
    const limit = Number(query.limit ?? 25);
    const page = Number(query.page ?? 0);
    const sorted = [...this.items].sort(
      (a, b) => (query.sort === 'oldest' ? 1 : -1) * (Date.parse(a.createdAt) - Date.parse(b.createdAt)),
    );
    return Promise.resolve({ total: sorted.length, medias: sorted.slice(page * limit, page * limit + limit) });
  }
}

export function item(id: string, createdAt: number, over: Partial<MediaItem> = {}): MediaItem {
  return {
    id,
    url: `http://x/${id}.mp4`,
    mime: 'video/mp4',
    user: 'u1',
    media: 'video',
    model: 'clipdesk/motion',
    provider: 'local-swift',
    prompt: `prompt ${id}`,
    size: '360p',
    duration: 2,
    createdAt: new Date(createdAt).toISOString(),
    modelSlug: 'clipdesk/motion:1.1',
    providerName: 'Local Swift',
    ...over,
  };
}
