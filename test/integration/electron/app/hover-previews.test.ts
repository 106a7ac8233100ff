import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouterClient } from '@orpc/server';
import type { App } from '../../../../electron/app/composition-root.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';
import { startTestApp } from '../../../support/test-app.ts';

// In the composition root, on the real Local engine: a generated video, once saved, gets its
// hover-play proxy in the app's media folder, and the library offers it as previewUrl; uploads do not.
let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-hover-previews-'));
  ({ app, ipc } = startTestApp({ dataDir: dir, secrets: memoryKeychain(), downloadDir: path.join(dir, 'downloads') }));
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** The item once `ok` holds for it (the test's timeout bounds the wait). */
async function itemWhen(id: string, ok: (i: LibraryItem) => boolean): Promise<LibraryItem> {
  for (;;) {
    const entry = await ipc.library.get({ id });
    if (ok(entry)) return entry;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('hover-play previews in the app', () => {
  it('a saved take gets a proxy that is not its master, and the library serves it', async () => {
    const job = await ipc.jobs.submit({
      kind: 'video',
      model: 'clipdesk/motion',
      prompt: 'a paper boat on a pond',
      size: '360p',
      duration: 2,
      routing: 'optimal',
      public: false,
    });
    let done = await ipc.jobs.get({ id: job.id });
    while (done.state !== 'done' && done.state !== 'failed') {
      await new Promise((r) => setTimeout(r, 50));
      done = await ipc.jobs.get({ id: job.id });
    }
    expect(done.state).toBe('done');
    const id = done.result!.itemIds[0]!;
    const entry = await itemWhen(id, (i) => Boolean(i.previewUrl));
    expect(entry.previewUrl).not.toBe(entry.localUrl);
    expect(entry.previewUrl).toBe(app.mediaUrl(path.join(dir, 'media', 'previews', `${id}.mp4`)));
    const page = await ipc.library.query({ origin: 'takes' });
    expect(page.items.find((i) => i.item.id === id)?.previewUrl).toBe(entry.previewUrl);
  });
});
