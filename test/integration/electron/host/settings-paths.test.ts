import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { startBrowserMode, type BrowserMode } from '../../../../electron/host/browser-mode.ts';
import type { IpcClient } from '../../../../shared/ipc/client.ts';
import type { SettingsPatch } from '../../../../shared/ipc/index.ts';
import { errorCode } from '../../../support/ipc-errors.ts';

// A defect found when the app was tried as a new user: the page could widen the app's file access to the whole disk by setting
// the download folder (`settings.update {downloadDir: "/"}`), then read any file through
// /local-media/downloads/… or uploads.probe. Each exploit as reported, against the real core.
const ONE_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const root = fileURLToPath(new URL('../../../..', import.meta.url));
let dir: string;
let mode: BrowserMode;
let ipc: IpcClient;
let cookie: string;

async function start(dataDir: string): Promise<BrowserMode> {
  const m = await startBrowserMode({ root, version: '0.0.0-test', dataDir, background: false });
  cookie = `clipdesk_${m.host.port}=${m.host.secret}`;
  ipc = createORPCClient(new RPCLink({ url: `${m.host.origin}/rpc`, headers: { cookie } }));
  return m;
}

function media(m: BrowserMode, rest: string): Promise<Response> {
  return fetch(`${m.host.origin}/local-media/downloads/${rest}`, { headers: { cookie } });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-paths-'));
  mode = await start(path.join(dir, 'data'));
});

afterAll(async () => {
  await mode?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the page cannot widen file access (browser mode)', () => {
  it('settings.update no longer takes the download folder or the ffmpeg path', async () => {
    const before = (await ipc.settings.get()).downloadDir;
    for (const patch of [{ downloadDir: '/' }, { downloadDir: '.' }, { ffmpegPath: '/bin/sh' }]) {
      expect(await errorCode(ipc.settings.update(patch as SettingsPatch))).toBe('invalid_input');
    }
    expect((await ipc.settings.get()).downloadDir).toBe(before);
    expect((await ipc.settings.get()).ffmpegPath).toBeNull();
    // What the report did next: neither the whole disk nor the app's own files are served.
    expect((await media(mode, 'etc/passwd')).status).toBe(404);
    expect((await media(mode, 'package.json')).status).toBe(404);
    expect(await errorCode(ipc.uploads.probe({ path: '/etc/shadow' }))).toBe('forbidden');
    expect(await errorCode(ipc.uploads.probe({ path: '/etc/passwd' }))).toBe('forbidden');
  });

  it('a typed folder is refused when it is a system, home, hidden, app or relative folder', async () => {
    await mkdir(path.join(dir, 'links'), { recursive: true });
    await symlink('/etc', path.join(dir, 'links', 'etc-link'));
    const refused = [
      '/',
      '/etc',
      '/usr/share',
      '/proc/self',
      '/var/log',
      '/tmp',
      '.',
      'downloads',
      homedir(),
      path.join(homedir(), '.ssh'),
      path.dirname(homedir()),
      root, // the install root: it holds package.json and the sources
      path.join(root, 'electron'),
      path.join(dir, 'data'), // the data root: settings, keys, the engine's database
      path.join(dir, 'data', 'engine'),
      path.join(dir, 'links', 'etc-link'), // symlinks are followed
      path.join(dir, 'missing'),
      path.join(root, 'package.json'),
    ];
    for (const folder of refused) {
      expect(await errorCode(ipc.settings.checkPath({ field: 'downloadDir', path: folder })), folder).toBe('forbidden');
      expect(await errorCode(ipc.settings.setPath({ field: 'downloadDir', path: folder })), folder).toBe('forbidden');
    }
    expect((await media(mode, 'passwd')).status).toBe(404);
    expect((await media(mode, 'package.json')).status).toBe(404);
  });

  it('a typed ordinary folder is checked, confirmed and then served; the default comes back with null', async () => {
    const chosen = path.join(dir, 'chosen');
    await mkdir(chosen);
    await writeFile(path.join(chosen, 'mine.mp4'), 'my clip');
    await writeFile(path.join(chosen, 'frame.png'), Buffer.from(ONE_PIXEL_PNG, 'base64'));
    await symlink(chosen, path.join(dir, 'chosen-link'));
    // The confirm step shows the real path main will use.
    expect(await ipc.settings.checkPath({ field: 'downloadDir', path: path.join(dir, 'chosen-link') })).toEqual({
      path: chosen,
    });
    const defaultDir = (await ipc.settings.get()).downloadDir;
    expect((await ipc.settings.setPath({ field: 'downloadDir', path: chosen })).downloadDir).toBe(chosen);
    expect(await (await media(mode, 'mine.mp4')).text()).toBe('my clip');
    expect((await ipc.uploads.probe({ path: path.join(chosen, 'frame.png') })).width).toBe(1);
    expect((await ipc.settings.setPath({ field: 'downloadDir', path: null })).downloadDir).toBe(defaultDir);
    expect((await media(mode, 'mine.mp4')).status).toBe(404);
  });

  it('a typed ffmpeg path must be an executable named ffmpeg, outside the app folders, that answers as ffmpeg', async () => {
    const bin = path.join(dir, 'bin');
    await mkdir(bin);
    const fake = async (name: string, out: string) => {
      const file = path.join(bin, name);
      await writeFile(file, `#!/bin/sh\necho "${out}"\n`);
      await chmod(file, 0o755);
      return file;
    };
    const good = await fake('ffmpeg', 'ffmpeg version 9.9-test Copyright');
    const otherName = await fake('not-ffmpeg', 'ffmpeg version 9.9-test');
    await mkdir(path.join(bin, 'liar'));
    const liar = await fake(path.join('liar', 'ffmpeg'), 'hello');
    const downloads = (await ipc.settings.get()).downloadDir;
    await mkdir(downloads, { recursive: true });
    const inDownloads = path.join(downloads, 'ffmpeg');
    await writeFile(inDownloads, '#!/bin/sh\necho "ffmpeg version 1"\n');
    await chmod(inDownloads, 0o755);
    const notExecutable = path.join(bin, 'plain', 'ffmpeg');
    await mkdir(path.dirname(notExecutable));
    await writeFile(notExecutable, '#!/bin/sh\necho "ffmpeg version 1"\n');

    for (const file of ['/bin/sh', otherName, liar, inDownloads, notExecutable, 'ffmpeg', bin]) {
      expect(await errorCode(ipc.settings.setPath({ field: 'ffmpegPath', path: file })), file).toBe('forbidden');
    }
    expect((await ipc.settings.get()).ffmpegPath).toBeNull();
    expect(await ipc.settings.checkPath({ field: 'ffmpegPath', path: good })).toEqual({ path: good });
    expect((await ipc.settings.setPath({ field: 'ffmpegPath', path: good })).ffmpegPath).toBe(good);
    expect((await ipc.settings.setPath({ field: 'ffmpegPath', path: null })).ffmpegPath).toBeNull();
  });

  it('has no native dialog: settings.choosePath is not_available', async () => {
    expect(await errorCode(ipc.settings.choosePath({ field: 'downloadDir' }))).toBe('not_available');
  });
});

describe('a download folder stored before the path rules', () => {
  it('is not served: the app falls back to its own folder at startup', async () => {
    const dataDir = path.join(dir, 'old-data');
    await mkdir(dataDir, { recursive: true });
    const stored = JSON.parse(await readFile(path.join(dir, 'data', 'settings.json'), 'utf8')) as {
      settings: Record<string, unknown>;
    };
    await writeFile(
      path.join(dataDir, 'settings.json'),
      JSON.stringify({ ...stored, settings: { ...stored.settings, downloadDir: '/' } }),
    );
    const old = await start(dataDir);
    try {
      expect((await ipc.settings.get()).downloadDir).toBe(path.join(dataDir, 'downloads'));
      expect((await media(old, 'etc/passwd')).status).toBe(404);
      expect(await errorCode(ipc.uploads.probe({ path: '/etc/passwd' }))).toBe('forbidden');
    } finally {
      await old.close();
    }
  });
});
