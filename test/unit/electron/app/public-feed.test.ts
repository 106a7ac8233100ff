import { describe, expect, it } from 'vitest';
import type { MediaItem, MediaListQuery } from '../../../../shared/api/index.ts';
import { publicFeedPage, type FeedSource } from '../../../../electron/app/public-feed.ts';

const item = (n: number, user: string, isPublic: boolean): MediaItem =>
  ({
    id: `m_${n}`,
    url: `http://x/${n}.mp4`,
    mime: 'video/mp4',
    user,
    media: 'video',
    model: 'b/m',
    provider: 'p',
    prompt: `p${n}`,
    size: '720p',
    duration: 4,
    public: isPublic,
  }) as MediaItem;

/** GET /media as the spec has it: the caller's own items and everyone else's public ones, newest first. */
function service(all: MediaItem[], me: string): FeedSource & { calls: Partial<MediaListQuery>[] } {
  const calls: Partial<MediaListQuery>[] = [];
  return {
    calls,
    listMedia(q) {
      calls.push(q as Partial<MediaListQuery>);
      const visible = all.filter((m) => (q.user === 'me' ? m.user === me : m.user === me || m.public));
      const limit = Number(q.limit ?? 25);
      const page = Number(q.page ?? 0);
      return Promise.resolve({ total: visible.length, medias: visible.slice(page * limit, (page + 1) * limit) });
    },
  };
}

describe('publicFeedPage', () => {
  it("leaves out the caller's own items (public or not) and counts them out of the total", async () => {
    const all = [
      item(1, 'me', false),
      item(2, 'ann', true),
      item(3, 'me', true),
      item(4, 'bob', false),
      item(5, 'bob', true),
    ];
    const res = await publicFeedPage(service(all, 'me'), { limit: 10, page: 0 });
    expect(res.items.map((m) => m.id)).toEqual(['m_2', 'm_5']);
    expect(res.total).toBe(2);
    expect(res.nextPage).toBeNull();
  });
  it("skips pages that hold only the caller's items and says which page comes next", async () => {
    const mine = Array.from({ length: 6 }, (_, i) => item(i, 'me', false));
    const all = [...mine, item(10, 'ann', true), item(11, 'ann', true), item(12, 'ann', true)];
    const src = service(all, 'me');
    const first = await publicFeedPage(src, { limit: 2, page: 0 });
    expect(first.items.map((m) => m.id)).toEqual(['m_10', 'm_11']);
    expect(first.nextPage).toBe(4);
    expect(first.total).toBe(3);
    const second = await publicFeedPage(src, { limit: 2, page: first.nextPage! });
    expect(second.items.map((m) => m.id)).toEqual(['m_12']);
    expect(second.nextPage).toBeNull();
  });
  it('gives up after a few empty pages but keeps the cursor moving', async () => {
    const all = [...Array.from({ length: 20 }, (_, i) => item(i, 'me', false)), item(99, 'ann', true)];
    const res = await publicFeedPage(service(all, 'me'), { limit: 2, page: 0 });
    expect(res.items).toEqual([]);
    expect(res.nextPage).toBe(6);
  });
  it('with no items of its own the caller sees every page as the service gives it', async () => {
    const all = [item(1, 'ann', true), item(2, 'bob', true), item(3, 'cy', true)];
    const res = await publicFeedPage(service(all, 'me'), { limit: 2, page: 0, media: 'video' });
    expect(res.items.map((m) => m.id)).toEqual(['m_1', 'm_2']);
    expect(res.nextPage).toBe(1);
    expect(res.total).toBe(3);
  });
});
