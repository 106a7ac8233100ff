import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/composition-root.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import { createLibraryStore, openDatabase } from '../../../../electron/core/library/index.ts';
import type { SecretStore } from '../../../../electron/core/secrets/index.ts';

// "Download again" did nothing for an item already on disk. It now downloads anew from the real
// Local engine; here, an item the service no longer has: the answer says so plainly, and the copy
// on disk stays. (The successful path runs in test/e2e/renderer/new-user-defects.test.ts.)
const keychain: SecretStore = {
  status: () => Promise.resolve({ backend: 'secret-service', available: true, message: 'ok' }),
  get: () => Promise.resolve(null),
  set: () => Promise.resolve(),
  delete: () => Promise.resolve(false),
  info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'secret-service' }),
};

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;
let copy: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-download-again-'));
  // The library index knows an item (downloaded earlier) that the Local engine has never had.
  const profileDir = path.join(dir, 'profiles', 'local');
  mkdirSync(profileDir, { recursive: true });
  copy = path.join(dir, 'old-copy.mp4');
  writeFileSync(copy, 'the copy on disk');
  app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: keychain,
    background: false,
  });
  ipc = createRouterClient(app.router, { context: { transport: 'http' } });
  // Open the session (the engine starts), then index the item with a file URL on that engine.
  await ipc.jobs.stats();
  const base = (await ipc.profiles.list()).profiles.find((p) => p.kind === 'local')!.baseUrl;
  const db = openDatabase(path.join(profileDir, 'library.db'));
  const store = createLibraryStore({ db, now: Date.now, retentionDays: () => 90 });
  store.upsert([
    {
      id: 'med_gone',
      url: `${base}/files/med_gone/video.mp4`,
      mime: 'video/mp4',
      user: 'local',
      media: 'video',
      model: 'clipdesk/motion',
      modelSlug: 'clipdesk/motion:1.1',
      provider: 'local-swift',
      providerName: 'Local Swift (procedural)',
      prompt: 'a clip the service deleted',
      size: '720p',
      duration: 2,
      createdAt: new Date().toISOString(),
    },
  ]);
  store.markDownloaded('med_gone', copy);
  db.close();
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('library.downloadAgain', () => {
  it('an item the service no longer has: a plain not_found_error, and the copy on disk is kept', async () => {
    const error: unknown = await ipc.library.downloadAgain({ id: 'med_gone' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'not_found_error',
      message:
        'The service no longer has this item, so it cannot be downloaded again. The copy already on disk is kept.',
    });
    expect(existsSync(copy)).toBe(true);
    expect(await readFile(copy, 'utf8')).toBe('the copy on disk');
    expect((await ipc.library.get({ id: 'med_gone' })).localPath).toBe(copy);
  });
});
