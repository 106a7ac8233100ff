import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import {
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  downloadManagerAsRetentionDownloader,
  openDatabase,
} from '../../../../../electron/core/library/index.ts';
import type { MediaSource, RetentionEvent, RetentionPolicy } from '../../../../../electron/core/library/index.ts';
import { ManualClock } from '../../../../../shared/clock.ts';
import { startEngine, tinyImage } from '../jobs/engine.ts';
import type { TestEngine } from '../jobs/engine.ts';

const RETENTION_SECONDS = 6;
let engine: TestEngine;
// The service's, the library's and the guard's time: items expire when the test moves it, never
// because the machine was slow (a loaded run once took longer than the retention to get there).
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  engine = await startEngine({ retentionSecondsOverride: RETENTION_SECONDS, sweepIntervalMs: 200, clock });
});
afterAll(async () => {
  await engine.close();
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000, everyMs = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('library against the Local engine', () => {
  it('syncs everything first, then one request when nothing is new, and finds items offline', async () => {
    const api = await engine.client('lib-user', 'pro');
    for (const prompt of ['red fox in snow', 'blue whale', 'fox cubs playing', 'city at night']) {
      await api.generateImage(tinyImage(prompt), { idempotencyKey: randomUUID() });
    }
    let requests = 0;
    const source: MediaSource = { listMedia: (q, o) => (requests++, api.listMedia(q, o)) };
    const store = createLibraryStore({
      db: openDatabase(':memory:'),
      now: () => Date.now(),
      retentionDays: () => RETENTION_SECONDS / 86_400,
    });
    const sync = createLibrarySync({ store, source, pageSize: 3 });
    expect(await sync.sync()).toMatchObject({ kind: 'full', added: 4, requests: 2 });
    requests = 0;
    expect(await sync.sync()).toMatchObject({ kind: 'incremental', added: 0, requests: 1 });
    expect(requests).toBe(1);
    const foxes = store.query({ search: 'fox', media: 'image', model: 'clipdesk/still' });
    expect(foxes.items.map((i) => i.item.prompt)).toEqual(['fox cubs playing', 'red fox in snow']);
    expect(foxes.items.every((i) => i.deadline === Date.parse(i.item.expiresAt!))).toBe(true);
  });

  it('retention guard saves a favourite before the service deletes it; the rest are marked lost, nothing crashes', async () => {
    const api = await engine.client('guard-user', 'pro');
    const made = [];
    for (const prompt of ['keep this one', 'let this go', 'and this']) {
      made.push((await api.generateImage(tinyImage(prompt), { idempotencyKey: randomUUID() })).data[0]!);
    }
    const store = createLibraryStore({
      db: openDatabase(join(engine.dir, 'guard.db')),
      now: () => clock.now(),
      retentionDays: () => RETENTION_SECONDS / 86_400,
    });
    const sync = createLibrarySync({ store, source: api });
    await sync.sync();
    const keep = made[0]!.id;
    store.setFavourite(keep, true);
    const downloads = createDownloadManager({ api, dir: join(engine.dir, 'saved'), maxAttempts: 1 });
    let policy: RetentionPolicy = 'favourites';
    const events: RetentionEvent[] = [];
    const guard = createRetentionGuard({
      store,
      downloader: downloadManagerAsRetentionDownloader(downloads),
      now: () => clock.now(),
      policy: () => policy,
      // Due at once: the clock stands still until the test moves it past the retention.
      marginMs: RETENTION_SECONDS * 1000,
      warnBeforeMs: RETENTION_SECONDS * 1000,
      intervalMs: 100,
      onEvent: (e) => events.push(e),
    });
    guard.start();
    await waitFor(() => store.get(keep)?.downloadedPath != null);
    expect(clock.now()).toBeLessThan(Date.parse(made[0]!.createdAt) + RETENTION_SECONDS * 1000);
    expect(existsSync(store.get(keep)!.downloadedPath!)).toBe(true);
    expect(
      events
        .filter((e) => e.type === 'warning')
        .map((e) => e.id)
        .sort(),
    ).toEqual([made[1]!.id, made[2]!.id].sort());

    // Past the retention: the service's sweeper (run here on demand as well as on its timer) deletes
    // what was not downloaded; the favourite stays (downloaded = exempt).
    clock.advance(RETENTION_SECONDS * 1000 + 1);
    await waitFor(
      async () => {
        await engine.service.sweepRetention();
        return (await api.listMedia({ user: 'me' })).total === 1;
        // Slow polling: every request counts against the tier's rate window.
      },
      15_000,
      500,
    );
    expect((await api.listMedia({ user: 'me' })).medias[0]!.id).toBe(keep);

    // Switching the policy now makes the guard try the deleted ones: they are marked lost, no throw.
    policy = 'everything';
    const tick = await guard.tick();
    expect([...tick.lost, ...tick.failed].sort()).toEqual([made[1]!.id, made[2]!.id].sort());
    const reconciled = await sync.reconcile();
    expect(tick.lost).toHaveLength(2);
    expect(reconciled.lost).toEqual([]);
    expect(store.query({ includeLost: false }).items.map((i) => i.item.id)).toEqual([keep]);
    expect(store.get(made[1]!.id)?.lostAt).not.toBeNull();
    await guard.dispose();
    await downloads.dispose();
  });
});
