import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChecksumMismatch, fetchPinnedBuild, PINNED_BUILDS, verifyChecksum } from '../../../scripts/fetch-ffmpeg.ts';
import type { PinnedBuild } from '../../../scripts/fetch-ffmpeg.ts';

/**
 * The packaging step that fetches the bundled ffmpeg (docs/architecture.md, "Bundled ffmpeg"): the
 * checksum step on a local file, and a whole run on a local archive. No network: the download is
 * a copy of a file made here.
 */
let dir: string;
let archive: string;
let archiveSha: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-fetch-ffmpeg-'));
  const content = join(dir, 'content', 'ffmpeg-9.9-static');
  await mkdir(content, { recursive: true });
  for (const tool of ['ffmpeg', 'ffprobe']) {
    await writeFile(join(content, tool), `#!/bin/sh\necho "${tool} version 9.9"\n`);
    await chmod(join(content, tool), 0o755);
  }
  archive = join(dir, 'ffmpeg-9.9-static.tar.xz');
  const made = spawnSync('tar', ['-cJf', archive, '-C', join(dir, 'content'), 'ffmpeg-9.9-static']);
  expect(made.status, made.stderr?.toString()).toBe(0);
  archiveSha = createHash('sha256')
    .update(await readFile(archive))
    .digest('hex');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const pin = (sha256: string): PinnedBuild => ({
  version: '9.9',
  source: 'a local test archive',
  archives: [
    {
      url: 'https://builds.example/ffmpeg-9.9-static.tar.xz',
      sha256,
      format: 'tar.xz',
      members: { ffmpeg: 'ffmpeg-9.9-static/ffmpeg', ffprobe: 'ffmpeg-9.9-static/ffprobe' },
    },
  ],
});
const copyOfArchive = async (_url: string, file: string) => copyFile(archive, file);

describe.skipIf(process.platform === 'win32')('fetch-ffmpeg: the checksum step', () => {
  it('passes the pinned bytes, and refuses and deletes any other', async () => {
    const file = join(dir, 'download.bin');
    await writeFile(file, 'the pinned bytes');
    const sha = createHash('sha256').update('the pinned bytes').digest('hex');
    await expect(verifyChecksum(file, sha)).resolves.toBeUndefined();
    await expect(verifyChecksum(file, sha.toUpperCase())).resolves.toBeUndefined();
    await writeFile(file, 'other bytes');
    const refused = await verifyChecksum(file, sha).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChecksumMismatch);
    expect((refused as Error).message).toBe(
      `download.bin: SHA-256 ${createHash('sha256').update('other bytes').digest('hex')}, but the pinned build is ${sha}; the file was deleted`,
    );
    expect(existsSync(file)).toBe(false);
  });

  it('unpacks both tools of a pinned archive, and nothing of one whose checksum differs', async () => {
    const out = join(dir, 'out-ok');
    const dest = await fetchPinnedBuild('linux-x64', {
      outDir: out,
      cacheDir: join(dir, 'cache-ok'),
      build: pin(archiveSha),
      fetchTo: copyOfArchive,
    });
    expect(dest).toBe(join(out, 'linux-x64'));
    for (const tool of ['ffmpeg', 'ffprobe']) {
      expect((await stat(join(dest, tool))).mode & 0o111).not.toBe(0);
      expect(spawnSync(join(dest, tool), ['-version']).stdout.toString()).toBe(`${tool} version 9.9\n`);
    }
    expect(await readFile(join(dest, 'SOURCE.txt'), 'utf8')).toContain(archiveSha);

    const bad = join(dir, 'out-bad');
    await expect(
      fetchPinnedBuild('linux-x64', {
        outDir: bad,
        cacheDir: join(dir, 'cache-bad'),
        build: pin('0'.repeat(64)),
        fetchTo: copyOfArchive,
      }),
    ).rejects.toBeInstanceOf(ChecksumMismatch);
    expect(existsSync(join(bad, 'linux-x64'))).toBe(false);
  });

  it('pins every packaged platform but Apple silicon to one archive checksum per file', () => {
    for (const target of ['linux-x64', 'darwin-x64', 'win32-x64'] as const) {
      const build = PINNED_BUILDS[target];
      expect(build, target).toBeDefined();
      for (const a of build!.archives) {
        expect(a.sha256, a.url).toMatch(/^[0-9a-f]{64}$/);
        expect(a.url.startsWith('https://'), a.url).toBe(true);
      }
      const tools = build!.archives.flatMap((a) => Object.keys(a.members)).sort();
      expect(tools, target).toEqual(['ffmpeg', 'ffprobe']);
    }
  });
});

describe('packaging bundles what the script fetched', () => {
  it('electron-builder.yml takes ffmpeg and ffprobe from build/ffmpeg, and npm run dist fetches them first', async () => {
    const root = join(import.meta.dirname, '../../..');
    const config = await readFile(join(root, 'electron-builder.yml'), 'utf8');
    expect(config).not.toContain('node_modules/@ffmpeg-installer');
    expect(config).not.toContain('node_modules/@ffprobe-installer');
    for (const from of [
      'build/ffmpeg/linux-x64/ffmpeg',
      'build/ffmpeg/linux-x64/ffprobe',
      'build/ffmpeg/darwin-${arch}/ffmpeg',
      'build/ffmpeg/darwin-${arch}/ffprobe',
      'build/ffmpeg/win32-${arch}/ffmpeg.exe',
      'build/ffmpeg/win32-${arch}/ffprobe.exe',
    ])
      expect(config).toContain(`from: ${from}`);
    const scripts = (
      JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts['dist']).toMatch(/node scripts\/fetch-ffmpeg\.ts && electron-builder/);
  });
});
