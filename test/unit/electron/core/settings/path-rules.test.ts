import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkDownloadFolder,
  folderProblem,
  type PathRulesContext,
} from '../../../../../electron/core/settings/path-rules.ts';

const linux: PathRulesContext = {
  home: '/home/ada',
  appRoots: ['/opt/Clipdesk', '/home/ada/.config/Clipdesk'],
  platform: 'linux',
  env: {},
};

describe('folderProblem: which folders may hold downloads (no file system)', () => {
  it.each([
    '/home/ada/Videos/Clipdesk',
    '/home/ada/Videos',
    '/mnt/archive/clips',
    '/media/usb-stick',
    '/run/media/ada/USB',
    '/srv/media/clips',
    '/tmp/clips',
    '/data/clips',
  ])('accepts %s', (folder) => expect(folderProblem(folder, linux)).toBeNull());

  it.each([
    ['/', /drive, mount or system/],
    ['/etc', /system folder \/etc/],
    ['/etc/ssl', /system folder \/etc/],
    ['/usr/share', /system folder \/usr/],
    ['/var/log', /system folder \/var/],
    ['/proc/self', /system folder \/proc/],
    ['/sys', /system folder/],
    ['/dev/shm', /system folder/],
    ['/boot', /system folder/],
    ['/lib64', /system folder/],
    ['/root/clips', /system folder \/root/],
    ['/run/user/1000', /system folder \/run/],
    ['/run/media/ada', /mount folder/],
    ['/tmp', /drive, mount or system/],
    ['/mnt', /drive, mount or system/],
    ['/home', /drive, mount or system/],
    ['/home/ada', /home folder/],
    ['/home/ada/.ssh', /hidden folder/],
    ['/home/ada/.local/share/x', /hidden folder/],
    ['/home/ada/.config/Clipdesk/engine', /app's own/],
    ['/opt/Clipdesk/resources', /app's own/],
    ['/opt', /app's own|drive, mount or system/],
    ['relative/dir', /absolute/],
    ['.', /absolute/],
    ['/home/ada/x\0y', /absolute/],
  ])('refuses %s', (folder, reason) => expect(folderProblem(folder, linux)).toMatch(reason));

  it('lets a home under a system folder keep its ordinary subfolders (root’s /root)', () => {
    const root = { ...linux, home: '/root' };
    expect(folderProblem('/root/Videos', root)).toBeNull();
    expect(folderProblem('/root', root)).toMatch(/home folder/);
    expect(folderProblem('/root/.ssh', root)).toMatch(/hidden/);
  });

  it('knows Windows and macOS system folders, case-insensitively', () => {
    const win: PathRulesContext = {
      home: 'C:\\Users\\ada',
      appRoots: ['C:\\Users\\ada\\AppData\\Roaming\\Clipdesk'],
      platform: 'win32',
      env: { SystemDrive: 'C:', SystemRoot: 'C:\\Windows' },
    };
    expect(folderProblem('C:\\Users\\ada\\Videos', win)).toBeNull();
    expect(folderProblem('D:\\Clips', win)).toBeNull();
    expect(folderProblem('c:\\windows\\system32', win)).toMatch(/system folder/);
    expect(folderProblem('C:\\Program Files\\x', win)).toMatch(/system folder/);
    expect(folderProblem('C:\\', win)).toMatch(/drive/);
    expect(folderProblem('C:\\Users\\ADA', win)).toMatch(/home folder/);
    const mac: PathRulesContext = { home: '/Users/ada', appRoots: [], platform: 'darwin', env: {} };
    expect(folderProblem('/Users/ada/Movies', mac)).toBeNull();
    expect(folderProblem('/Volumes/Archive', mac)).toBeNull();
    expect(folderProblem('/Volumes', mac)).toMatch(/drive, mount/);
    expect(folderProblem('/System/Library', mac)).toMatch(/system folder/);
    expect(folderProblem('/private/etc', mac)).toMatch(/system folder/);
  });
});

describe('checkDownloadFolder: the real, existing folder', () => {
  let dir: string;
  let ctx: PathRulesContext;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-rules-'));
    await mkdir(path.join(dir, 'clips'));
    await symlink(path.join(dir, 'clips'), path.join(dir, 'clips-link'));
    await symlink('/etc', path.join(dir, 'etc-link'));
    ctx = { home: path.join(dir, 'home'), appRoots: [path.join(dir, 'app')] };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('follows symlinks, and answers the real path', async () => {
    expect(await checkDownloadFolder(path.join(dir, 'clips-link'), ctx)).toEqual({
      ok: true,
      path: path.join(dir, 'clips'),
    });
    expect(await checkDownloadFolder(path.join(dir, 'etc-link'), ctx)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/system folder \/etc/) as unknown,
    });
  });

  it('refuses what does not exist or is not a folder', async () => {
    expect(await checkDownloadFolder(path.join(dir, 'nope'), ctx)).toEqual({ ok: false, reason: 'it does not exist' });
    expect(await checkDownloadFolder('/etc/hostname', { ...ctx })).toMatchObject({ ok: false });
  });
});
