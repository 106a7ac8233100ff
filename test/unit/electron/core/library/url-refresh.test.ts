import { describe, expect, it } from 'vitest';
import type { MediaItem } from '../../../../../shared/api/index.ts';
import { createUrlRefresher, urlsExpiring } from '../../../../../electron/core/library/url-refresh.ts';
import type { LibraryItem } from '../../../../../electron/core/library/index.ts';

const NOW = Date.UTC(2026, 0, 2);
const item = (id: string, urlExpiresAt: string | null | undefined): MediaItem => ({
  id,
  url: `http://svc/v1/files/${id}/video.mp4?expires=1&sig=old`,
  mime: 'video/mp4',
  user: 'u',
  media: 'video',
  model: 'a/b',
  provider: 'p',
  prompt: 'x',
  size: '360p',
  duration: 2,
  createdAt: new Date(NOW - 86_400_000).toISOString(),
  modelSlug: 'a/b:1',
  providerName: 'P',
  ...(urlExpiresAt === undefined ? {} : { urlExpiresAt }),
});
const entry = (i: MediaItem, lostAt: number | null = null): LibraryItem => ({
  item: i,
  deadline: null,
  downloadedPath: null,
  downloadedAt: null,
  favourite: false,
  lostAt,
  warnedAt: null,
});
const past = new Date(NOW - 1000).toISOString();
const later = new Date(NOW + 3_600_000).toISOString();

function harness() {
  const calls = { getMedia: [] as string[], upserts: [] as MediaItem[][], reconciles: 0 };
  let now = NOW;
  const refresher = createUrlRefresher({
    getMedia: (id) => {
      calls.getMedia.push(id);
      return Promise.resolve({ ...item(id, later), url: `http://svc/v1/files/${id}/video.mp4?sig=new` });
    },
    upsert: (items) => calls.upserts.push([...items]),
    reconcile: () => {
      calls.reconciles++;
      return Promise.resolve();
    },
    now: () => now,
  });
  return { calls, refresher, advance: (ms: number) => (now += ms) };
}

describe('library URL refresh', () => {
  it('knows an expired or nearly expired URL, and that a URL without expiry never is', () => {
    expect(urlsExpiring(item('a', past), NOW)).toBe(true);
    expect(urlsExpiring(item('a', new Date(NOW + 60_000).toISOString()), NOW)).toBe(true);
    expect(urlsExpiring(item('a', later), NOW)).toBe(false);
    expect(urlsExpiring(item('a', null), NOW)).toBe(false);
    expect(urlsExpiring(item('a', undefined), NOW)).toBe(false);
  });

  it('renews one item’s expired URLs with GET /media/:id and stores them', async () => {
    const { calls, refresher } = harness();
    const fresh = await refresher.refreshItem(entry(item('a', past)));
    expect(fresh.url).toContain('sig=new');
    expect(calls.getMedia).toEqual(['a']);
    expect(calls.upserts).toEqual([[fresh]]);
    // Nothing to do for a valid URL or an item the service deleted.
    await refresher.refreshItem(entry(item('b', later)));
    await refresher.refreshItem(entry(item('c', past), NOW));
    expect(calls.getMedia).toEqual(['a']);
  });

  it('refreshes a page in the background through the list, at most once a minute', async () => {
    const { calls, refresher, advance } = harness();
    refresher.refreshInBackground([entry(item('a', later))]);
    expect(calls.reconciles).toBe(0);
    refresher.refreshInBackground([entry(item('a', later)), entry(item('b', past))]);
    refresher.refreshInBackground([entry(item('b', past))]);
    // Let the pass finish: a pass still running is never started twice either.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.reconciles).toBe(1);
    advance(30_000);
    refresher.refreshInBackground([entry(item('b', past))]);
    expect(calls.reconciles).toBe(1);
    advance(31_000);
    refresher.refreshInBackground([entry(item('b', past))]);
    expect(calls.reconciles).toBe(2);
  });
});
