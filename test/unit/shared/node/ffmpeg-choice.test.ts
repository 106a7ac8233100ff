import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseMediaBinaries,
  ffmpegPath,
  ffprobePath,
  packagedMediaBinaries,
  pathPair,
  useBundledMediaBinaries,
  versionIn,
} from '../../../../shared/node/ffmpeg.ts';

/**
 * Which ffmpeg + ffprobe run (docs/architecture.md, "Bundled ffmpeg"): a consistent pair on the
 * PATH before the npm builds; the setting and CLIPDESK_FFMPEG/CLIPDESK_FFPROBE before both. The
 * PATH here holds tiny scripts that print what a real build prints first.
 */
let dir: string;

async function fakeTool(folder: string, tool: 'ffmpeg' | 'ffprobe', version: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = join(folder, tool);
  await writeFile(file, `#!/bin/sh\necho "${tool} version ${version} Copyright (c) 2000-2025 the FFmpeg developers"\n`);
  await chmod(file, 0o755);
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-ffmpeg-choice-'));
  await fakeTool(join(dir, 'current'), 'ffmpeg', '7.1.1-1+b1');
  await fakeTool(join(dir, 'current'), 'ffprobe', '7.1.1-1+b1');
  await fakeTool(join(dir, 'mixed'), 'ffmpeg', '7.1.1');
  await fakeTool(join(dir, 'mixed'), 'ffprobe', '6.0');
  await fakeTool(join(dir, 'alone'), 'ffmpeg', '7.1.1');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform === 'win32')('ffmpeg and ffprobe: which pair runs', () => {
  it('a consistent pair on the PATH is chosen over the npm builds', () => {
    const env = { PATH: join(dir, 'current') };
    expect(pathPair(env)).toEqual({
      ffmpegPath: join(dir, 'current', 'ffmpeg'),
      ffprobePath: join(dir, 'current', 'ffprobe'),
      version: '7.1.1-1+b1',
    });
    expect(chooseMediaBinaries({}, env)).toEqual({
      ffmpegPath: join(dir, 'current', 'ffmpeg'),
      ffprobePath: join(dir, 'current', 'ffprobe'),
      ffmpegSource: 'path',
      ffprobeSource: 'path',
    });
  });

  it('every run of the process follows that choice', () => {
    const saved = process.env['PATH'];
    process.env['PATH'] = join(dir, 'current');
    try {
      expect(ffmpegPath()).toBe(join(dir, 'current', 'ffmpeg'));
      expect(ffprobePath()).toBe(join(dir, 'current', 'ffprobe'));
    } finally {
      process.env['PATH'] = saved;
    }
  });

  it('a pair that reports two versions, or half a pair, leaves the npm builds in use', () => {
    for (const folder of ['mixed', 'alone']) {
      const env = { PATH: join(dir, folder) };
      expect(pathPair(env), folder).toBeNull();
      const chosen = chooseMediaBinaries({}, env);
      expect(chosen).toMatchObject({ ffmpegSource: 'bundled', ffprobeSource: 'bundled' });
      expect(chosen.ffmpegPath).toMatch(/@ffmpeg-installer/);
      expect(chosen.ffprobePath).toMatch(/@ffprobe-installer/);
    }
  });

  it('the setting and CLIPDESK_FFMPEG / CLIPDESK_FFPROBE still win, each for its own tool', () => {
    const env = { PATH: join(dir, 'current'), CLIPDESK_FFPROBE: '/opt/ff/ffprobe' };
    expect(chooseMediaBinaries({ ffmpegPath: '/chosen/ffmpeg' }, env)).toEqual({
      ffmpegPath: '/chosen/ffmpeg',
      ffprobePath: '/opt/ff/ffprobe',
      ffmpegSource: 'explicit',
      ffprobeSource: 'environment',
    });
    expect(chooseMediaBinaries({}, { ...env, CLIPDESK_FFMPEG: '/env/ffmpeg' })).toMatchObject({
      ffmpegPath: '/env/ffmpeg',
      ffmpegSource: 'environment',
    });
    expect(chooseMediaBinaries({}, { PATH: join(dir, 'current') }).ffprobeSource).toBe('path');
  });

  it("the packaged app's resources/bin is the bundled build: after a PATH pair, before the names", async () => {
    const resources = join(dir, 'resources');
    expect(packagedMediaBinaries(resources, 'linux')).toBeUndefined();
    await fakeTool(join(resources, 'bin'), 'ffmpeg', '7.1');
    expect(packagedMediaBinaries(resources, 'linux')).toBeUndefined(); // half a pair
    await fakeTool(join(resources, 'bin'), 'ffprobe', '7.1');
    const packaged = packagedMediaBinaries(resources, 'linux');
    expect(packaged).toEqual({
      ffmpegPath: join(resources, 'bin', 'ffmpeg'),
      ffprobePath: join(resources, 'bin', 'ffprobe'),
    });
    useBundledMediaBinaries(packaged);
    try {
      expect(chooseMediaBinaries({}, { PATH: join(dir, 'mixed') })).toEqual({
        ...packaged,
        ffmpegSource: 'bundled',
        ffprobeSource: 'bundled',
      });
      expect(chooseMediaBinaries({}, { PATH: join(dir, 'current') }).ffmpegSource).toBe('path');
    } finally {
      useBundledMediaBinaries(undefined);
    }
  });

  it('reads the version from the first line each tool prints', () => {
    expect(versionIn('ffmpeg version 7.1.1-1+b1 Copyright (c) 2000-2025', 'ffmpeg')).toBe('7.1.1-1+b1');
    expect(versionIn('ffprobe version N-66595-gc2b38619c0-static https://…', 'ffprobe')).toBe(
      'N-66595-gc2b38619c0-static',
    );
    expect(versionIn('ffprobe version 6.0', 'ffmpeg')).toBeNull();
  });
});
