// Images are saved where the OS keeps pictures while the download folder is the default one
// (docs/workflows.md "Retention, downloads and notifications in the app").
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultDownloadDir,
  defaultPicturesDir,
  imageDownloadDir,
} from '../../../../../electron/core/settings/index.ts';
import { xdgUserDir } from '../../../../../electron/core/settings/data-paths.ts';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import type { ApiClient } from '../../../../../electron/core/api/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'clipdesk-pictures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An XDG config folder whose user-dirs.dirs says `line`. */
function configWith(name: string, line: string): string {
  const config = join(dir, name);
  mkdirSync(config, { recursive: true });
  writeFileSync(join(config, 'user-dirs.dirs'), `# written by xdg-user-dirs-update\n${line}\n`);
  return config;
}

describe('the pictures folder', () => {
  it('Linux: XDG_PICTURES_DIR, else user-dirs.dirs, else ~/Pictures', () => {
    expect(defaultPicturesDir({ XDG_PICTURES_DIR: '/data/Bilder' }, 'linux')).toBe('/data/Bilder/Clipdesk');
    const config = configWith('de', 'XDG_PICTURES_DIR="$HOME/Bilder"');
    expect(xdgUserDir('PICTURES', { XDG_CONFIG_HOME: config }, '/home/ada')).toBe('/home/ada/Bilder');
    expect(defaultPicturesDir({ XDG_CONFIG_HOME: config }, 'linux')).toBe(join(homedir(), 'Bilder', 'Clipdesk'));
    // "$HOME/" alone disables the folder: the usual one is used.
    const off = configWith('off', 'XDG_PICTURES_DIR="$HOME/"');
    expect(defaultPicturesDir({ XDG_CONFIG_HOME: off }, 'linux')).toBe(join(homedir(), 'Pictures', 'Clipdesk'));
    expect(defaultPicturesDir({ XDG_CONFIG_HOME: join(dir, 'none') }, 'linux')).toBe(
      join(homedir(), 'Pictures', 'Clipdesk'),
    );
  });

  it('macOS and Windows: ~/Pictures', () => {
    expect(defaultPicturesDir({}, 'darwin')).toBe(join(homedir(), 'Pictures', 'Clipdesk'));
    expect(defaultPicturesDir({ XDG_PICTURES_DIR: '/x' }, 'win32')).toBe(join(homedir(), 'Pictures', 'Clipdesk'));
  });

  it('images go to the pictures folder while the download folder is the default; a chosen folder holds both', () => {
    const env = { XDG_VIDEOS_DIR: '/home/ada/Videos', XDG_PICTURES_DIR: '/home/ada/Pictures' };
    expect(imageDownloadDir({ downloadDir: defaultDownloadDir(env) }, env, 'linux')).toBe(
      '/home/ada/Pictures/Clipdesk',
    );
    expect(imageDownloadDir({ downloadDir: '/media/ssd/clips' }, env, 'linux')).toBe('/media/ssd/clips');
  });

  it('the download manager puts an image under imageDir and a video under dir', () => {
    const manager = createDownloadManager({ api: {} as ApiClient, dir: '/v', imageDir: '/p', pattern: '{id}.{ext}' });
    const item = { id: 'med_1', model: 'm', provider: 'p', createdAt: '2026-12-06T10:00:00Z', formats: [] };
    expect(manager.pathFor({ ...item, media: 'image', mime: 'image/png', url: 'https://x/a.png' } as never)).toBe(
      '/p/med_1.png',
    );
    expect(manager.pathFor({ ...item, media: 'video', mime: 'video/mp4', url: 'https://x/a.mp4' } as never)).toBe(
      '/v/med_1.mp4',
    );
  });
});
