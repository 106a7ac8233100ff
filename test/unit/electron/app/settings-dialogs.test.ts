import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/composition-root.ts';
import { browserPlatform, type PlatformPort } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import { errorCode } from '../../../support/ipc-errors.ts';

// The desktop app: the download folder and ffmpeg change only through main's own native dialog.
// The dialog is the platform port's (Electron's dialog in electron/main/platform/desktop.ts).
let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;
let nextPick: string | null = null;
const dialogs: string[] = [];

const desktop: PlatformPort = {
  ...browserPlatform,
  mode: 'electron',
  capabilities: { ...browserPlatform.capabilities, pickDirectory: true, pathUploads: true },
  pickDirectory: (o) => {
    dialogs.push(`folder:${o.title ?? ''}`);
    return Promise.resolve(nextPick);
  },
  pickFile: (o) => {
    dialogs.push(`file:${o.title ?? ''}`);
    return Promise.resolve(nextPick);
  },
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-dialogs-'));
  app = createApp({
    dataDir: path.join(dir, 'data'),
    platform: desktop,
    version: '0',
    mediaUrlPrefix: 'clipdesk-media://',
    downloadDirOverride: path.join(dir, 'data', 'downloads'),
    background: false,
  });
  ipc = createRouterClient(app.router, { context: { transport: 'electron' } });
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('path settings in the desktop app', () => {
  it('main opens the dialog and stores the folder the user picked', async () => {
    const picked = path.join(dir, 'picked');
    await mkdir(picked);
    nextPick = picked;
    const result = await ipc.settings.choosePath({ field: 'downloadDir' });
    expect(result.chosen).toBe(true);
    expect(result.settings.downloadDir).toBe(picked);
    expect(dialogs.at(-1)).toBe('folder:Download folder');
    expect(app.mediaRoots().downloads).toBe(picked);
  });

  it('a cancelled dialog changes nothing', async () => {
    const before = (await ipc.settings.get()).downloadDir;
    nextPick = null;
    expect(await ipc.settings.choosePath({ field: 'downloadDir' })).toMatchObject({
      chosen: false,
      settings: { downloadDir: before },
    });
  });

  it('a picked system folder is still refused', async () => {
    const before = (await ipc.settings.get()).downloadDir;
    for (const folder of ['/', '/etc', path.join(dir, 'data')]) {
      nextPick = folder;
      expect(await errorCode(ipc.settings.choosePath({ field: 'downloadDir' })), folder).toBe('forbidden');
    }
    expect((await ipc.settings.get()).downloadDir).toBe(before);
  });

  it('a typed path is refused: the renderer never names the folder or the binary', async () => {
    const elsewhere = path.join(dir, 'typed');
    await mkdir(elsewhere);
    for (const field of ['downloadDir', 'ffmpegPath'] as const) {
      expect(await errorCode(ipc.settings.checkPath({ field, path: elsewhere }))).toBe('forbidden');
      expect(await errorCode(ipc.settings.setPath({ field, path: elsewhere }))).toBe('forbidden');
    }
    // Back to the defaults is always allowed.
    expect((await ipc.settings.setPath({ field: 'downloadDir', path: null })).downloadDir).toBe(
      path.join(dir, 'data', 'downloads'),
    );
    expect((await ipc.settings.setPath({ field: 'ffmpegPath', path: null })).ffmpegPath).toBeNull();
  });

  it('the ffmpeg dialog is a file dialog, and what it picks must answer as ffmpeg', async () => {
    nextPick = '/bin/sh';
    expect(await errorCode(ipc.settings.choosePath({ field: 'ffmpegPath' }))).toBe('forbidden');
    expect(dialogs.at(-1)).toBe('file:ffmpeg binary');
    expect((await ipc.settings.get()).ffmpegPath).toBeNull();
  });
});
