import { describe, expect, it } from 'vitest';
import { createLibraryStore, indexJobResult, openDatabase } from '../../../../../electron/core/library/index.ts';
import { coreJob } from '../../../../support/core-job.ts';
import { item } from './fake-media.ts';

const T0 = Date.UTC(2026, 0, 10);

describe('a finished job’s items enter the index', () => {
  it('indexes a done job’s items and records the files it saved as downloaded', () => {
    const store = createLibraryStore({ db: openDatabase(':memory:'), now: () => T0, retentionDays: () => 7 });
    const items = [item('med_a', T0), item('med_b', T0)];
    const result = { items, price: 0.1 };
    expect(indexJobResult(store, coreJob('j1', T0, { state: 'downloading', result }))).toBeNull();
    expect(store.get('med_a')).toBeNull();
    const ids = indexJobResult(store, coreJob('j1', T0, { state: 'done', result, downloads: ['/videos/a.mp4'] }));
    expect(ids).toEqual(['med_a', 'med_b']);
    expect(store.get('med_a')?.downloadedPath).toBe('/videos/a.mp4');
    expect(store.get('med_b')?.item.id).toBe('med_b');
    expect(store.get('med_b')?.downloadedPath).toBeNull();
  });
});
