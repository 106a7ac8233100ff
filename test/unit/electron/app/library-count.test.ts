// library.query's `total` is kept between calls (counting is the costly part of a page, on main's
// thread: docs/benchmarks.md, the queue under load) and must still follow every change of the index.
import { describe, expect, it } from 'vitest';
import { libraryHandlers } from '../../../../electron/app/handlers/library.ts';
import { EventBus } from '../../../../electron/app/events.ts';
import type { ServiceSession } from '../../../../electron/app/types.ts';
import { createLibraryStore, openDatabase } from '../../../../electron/core/library/index.ts';
import type { MediaItem } from '../../../../shared/api/index.ts';
import type { LibraryQueryInput } from '../../../../shared/ipc/schemas/library.ts';
import { LibraryQuery } from '../../../../shared/ipc/schemas/library.ts';

const NOW = Date.UTC(2026, 0, 1);

function item(i: number, prompt: string): MediaItem {
  return {
    id: `med_${i}`,
    url: `http://127.0.0.1/v1/files/${i}/video.mp4`,
    mime: 'video/mp4',
    user: 'u',
    media: i % 2 ? 'video' : 'image',
    model: 'clipdesk/motion',
    modelSlug: 'clipdesk/motion:1.1',
    provider: 'local-swift',
    providerName: 'Local Swift',
    prompt,
    size: '720p',
    duration: 4,
    createdAt: new Date(NOW - (100 - i) * 1000).toISOString(),
  };
}

describe('library.query total', () => {
  it('follows upserts, favourites and removals while kept between pages', async () => {
    const store = createLibraryStore({ db: openDatabase(':memory:'), now: () => NOW, retentionDays: () => 30 });
    store.upsert(Array.from({ length: 60 }, (_, i) => item(i, i < 40 ? `a sunset ${i}` : `a fox ${i}`)));
    const session = { library: store } as unknown as ServiceSession;
    const { library } = libraryHandlers({
      session: () => Promise.resolve(session),
      bus: new EventBus(),
      media: () => {
        throw new Error('not used');
      },
      platform: {} as never,
      workDir: '/tmp/unused',
      downloadDir: () => '/tmp/unused',
      mediaUrl: () => null,
      now: () => NOW,
    });
    const query = async (q: LibraryQueryInput) =>
      (await library.query(LibraryQuery.parse(q), {} as never)) as { total: number; nextCursor: string | null };

    const first = await query({ search: 'sunset', limit: 10 });
    expect(first.total).toBe(40);
    // The next page, from the kept count.
    expect((await query({ search: 'sunset', limit: 10, cursor: first.nextCursor! })).total).toBe(40);
    expect((await query({ search: 'fox' })).total).toBe(20);

    store.upsert([item(100, 'one more sunset')]);
    expect((await query({ search: 'sunset', limit: 10 })).total).toBe(41);
    expect((await query({ favourite: true })).total).toBe(0);
    store.setFavourite('med_3', true);
    expect((await query({ favourite: true })).total).toBe(1);
    expect((await query({ search: 'fox' })).total).toBe(20);
    // A search alone is counted by the full-text index; with a filter, over the items.
    expect((await query({ search: 'sunset', media: 'video' })).total).toBe(20);
    store.upsert([item(101, 'a fox now')]);
    expect((await query({ search: 'fox' })).total).toBe(21);
    expect((await query({ search: 'fox', favourite: true })).total).toBe(0);
    // Lost items (deleted by the service) are left out by default, also from a search's count.
    store.markLost('med_41');
    store.markLost('med_42');
    expect((await query({ search: 'fox' })).total).toBe(19);
    expect((await query({ search: 'fox', includeLost: true })).total).toBe(21);
    // med_41 is a video, med_42 an image.
    expect((await query({ media: 'video', size: '720p' })).total).toBe(
      (await query({ media: 'video', size: '720p', includeLost: true })).total - 1,
    );
  });
});
