// Fetches the current static ffmpeg + ffprobe that packaging bundles (docs/architecture.md,
// "Bundled ffmpeg"): a pinned version per platform, each archive checked against its pinned
// SHA-256 before anything is unpacked. `npm run dist` runs it for the machine's own platform;
// `node scripts/fetch-ffmpeg.ts --target win32-x64` fetches another's. It needs the internet, as
// packaging does (electron-builder downloads Electron too); tests never run it against the network.
//
// Where a platform has no pinned build yet (darwin-arm64), the npm package's build is copied in its
// place, with a warning, so packaging works as before; `clipdesk doctor` then warns on that build.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';

export type FfmpegTarget = 'linux-x64' | 'darwin-x64' | 'darwin-arm64' | 'win32-x64';

export interface PinnedArchive {
  url: string;
  /** The same bytes elsewhere, tried in order when `url` fails (the checksum decides either way). */
  mirrors?: string[];
  /** SHA-256 of the archive as downloaded, lower-case hex. */
  sha256: string;
  format: 'tar.xz' | 'zip';
  /** Each tool's path inside the archive. */
  members: { ffmpeg?: string; ffprobe?: string };
}

export interface PinnedBuild {
  /** The version both tools print (`ffmpeg version …`). */
  version: string;
  /** Who builds it, for the notice beside the binaries. */
  source: string;
  archives: PinnedArchive[];
}

/**
 * The pins. To move to a newer build: change the URL and version, download the archive once,
 * put its `sha256sum` here, and check that both tools print the same version.
 */
export const PINNED_BUILDS: Partial<Record<FfmpegTarget, PinnedBuild>> = {
  'linux-x64': {
    version: '7.0.2-static',
    source: 'https://johnvansickle.com/ffmpeg/ (GPL-3.0-or-later)',
    archives: [
      {
        url: 'https://johnvansickle.com/ffmpeg/releases/ffmpeg-7.0.2-amd64-static.tar.xz',
        // A superseded release moves to old-releases/, same bytes.
        mirrors: ['https://johnvansickle.com/ffmpeg/old-releases/ffmpeg-7.0.2-amd64-static.tar.xz'],
        sha256: 'abda8d77ce8309141f83ab8edf0596834087c52467f6badf376a6a2a4c87cf67',
        format: 'tar.xz',
        members: {
          ffmpeg: 'ffmpeg-7.0.2-amd64-static/ffmpeg',
          ffprobe: 'ffmpeg-7.0.2-amd64-static/ffprobe',
        },
      },
    ],
  },
  'darwin-x64': {
    version: '7.1.1',
    source: 'https://evermeet.cx/ffmpeg/ (GPL-3.0-or-later)',
    archives: [
      {
        url: 'https://evermeet.cx/ffmpeg/ffmpeg-7.1.1.zip',
        sha256: '8d7917c1cebd7a29e68c0a0a6cc4ecc3fe05c7fffed958636c7018b319afdda4',
        format: 'zip',
        members: { ffmpeg: 'ffmpeg' },
      },
      {
        url: 'https://evermeet.cx/ffmpeg/ffprobe-7.1.1.zip',
        sha256: '5a0a77d5e0c689f7b577788e286dd46b2c6120babd14301cce7a79fcfd3f7d28',
        format: 'zip',
        members: { ffprobe: 'ffprobe' },
      },
    ],
  },
  'win32-x64': {
    version: 'n7.1-39-g64e2864cb9',
    source: 'https://github.com/BtbN/FFmpeg-Builds (GPL-3.0-or-later)',
    archives: [
      {
        url: 'https://github.com/BtbN/FFmpeg-Builds/releases/download/autobuild-2024-11-30-13-12/ffmpeg-n7.1-39-g64e2864cb9-win64-gpl-7.1.zip',
        sha256: 'f72c2f46c3646a5d4b457d5b7001ff96dc185111455f7866a0456f21e430555b',
        format: 'zip',
        members: {
          ffmpeg: 'ffmpeg-n7.1-39-g64e2864cb9-win64-gpl-7.1/bin/ffmpeg.exe',
          ffprobe: 'ffmpeg-n7.1-39-g64e2864cb9-win64-gpl-7.1/bin/ffprobe.exe',
        },
      },
    ],
  },
};

/** The archive's bytes are not the pinned ones: never unpacked, and deleted. */
export class ChecksumMismatch extends Error {
  constructor(file: string, expected: string, actual: string) {
    super(`${path.basename(file)}: SHA-256 ${actual}, but the pinned build is ${expected}; the file was deleted`);
    this.name = 'ChecksumMismatch';
  }
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Checks a downloaded archive against its pin; a mismatch deletes it and throws ChecksumMismatch. */
export async function verifyChecksum(file: string, expected: string): Promise<void> {
  const actual = await sha256Of(file);
  if (actual === expected.toLowerCase()) return;
  await rm(file, { force: true });
  throw new ChecksumMismatch(file, expected, actual);
}

/** Saves a URL to a file (a temporary name, renamed once complete). */
export async function download(url: string, file: string): Promise<void> {
  const response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(10 * 60_000) });
  if (!response.ok || !response.body) throw new Error(`${url} answered HTTP ${response.status}`);
  const partial = `${file}.partial`;
  await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(partial));
  await rename(partial, file);
}

async function fetchFirst(
  urls: string[],
  file: string,
  fetchTo: (url: string, file: string) => Promise<void> = download,
): Promise<void> {
  const failures: string[] = [];
  for (const url of urls) {
    try {
      return await fetchTo(url, file);
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  throw new Error(`could not download ${path.basename(file)}: ${failures.join('; ')}`);
}

function extract(archive: PinnedArchive, file: string, member: string, into: string): void {
  const run =
    archive.format === 'tar.xz'
      ? spawnSync('tar', ['-xJf', file, '-C', into, member], { stdio: 'inherit' })
      : process.platform === 'win32'
        ? spawnSync('tar', ['-xf', file, '-C', into, member], { stdio: 'inherit' })
        : spawnSync('unzip', ['-o', '-q', file, member, '-d', into], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`could not unpack ${member} from ${path.basename(file)}`);
}

export interface FetchOptions {
  /** Where the tools go: `<outDir>/<target>/ffmpeg[.exe]`. */
  outDir: string;
  /** Where archives are kept between runs (checked again on every run). */
  cacheDir: string;
  /** Default: the pins above. */
  build?: PinnedBuild;
  /** Default: download (tests pass a copy of a local file). */
  fetchTo?: (url: string, file: string) => Promise<void>;
}

/** Fetches, checks and unpacks one target's pinned build; returns the folder holding both tools. */
export async function fetchPinnedBuild(target: FfmpegTarget, options: FetchOptions): Promise<string> {
  const build = options.build ?? PINNED_BUILDS[target];
  const exe = target.startsWith('win32') ? '.exe' : '';
  const dest = path.join(options.outDir, target);
  await mkdir(options.cacheDir, { recursive: true });
  if (!build) return copyNpmBuild(target, dest, exe);
  const staging = await mkdtemp(path.join(options.cacheDir, 'unpack-'));
  try {
    for (const archive of build.archives) {
      const file = path.join(options.cacheDir, path.basename(new URL(archive.url).pathname));
      if (!existsSync(file)) await fetchFirst([archive.url, ...(archive.mirrors ?? [])], file, options.fetchTo);
      await verifyChecksum(file, archive.sha256);
      for (const member of Object.values(archive.members)) extract(archive, file, member, staging);
    }
    await mkdir(dest, { recursive: true });
    for (const tool of ['ffmpeg', 'ffprobe'] as const) {
      const member = build.archives.map((a) => a.members[tool]).find(Boolean);
      if (!member) throw new Error(`the pinned build for ${target} has no ${tool}`);
      await copyFile(path.join(staging, member), path.join(dest, `${tool}${exe}`));
      await chmod(path.join(dest, `${tool}${exe}`), 0o755);
    }
    const sums = build.archives.map((a) => `${a.sha256}  ${a.url}`).join('\n');
    await writeFile(path.join(dest, 'SOURCE.txt'), `ffmpeg ${build.version} from ${build.source}\n${sums}\n`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return dest;
}

async function copyNpmBuild(target: FfmpegTarget, dest: string, exe: string): Promise<string> {
  const require = createRequire(import.meta.url);
  console.warn(`fetch-ffmpeg: no pinned current build for ${target}; bundling the npm packages' build instead`);
  await mkdir(dest, { recursive: true });
  for (const tool of ['ffmpeg', 'ffprobe'] as const) {
    const pkg = `@${tool}-installer/${target}`;
    const from = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), `${tool}${exe}`);
    await copyFile(from, path.join(dest, `${tool}${exe}`));
  }
  return dest;
}

function targetsFrom(argv: string[]): FfmpegTarget[] {
  const given = argv.flatMap((arg, i) => (arg === '--target' && argv[i + 1] ? [argv[i + 1] as string] : []));
  const known: FfmpegTarget[] = ['linux-x64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];
  const wanted = given.length > 0 ? given : [`${process.platform}-${process.arch}`];
  for (const t of wanted)
    if (!known.includes(t as FfmpegTarget)) throw new Error(`unknown target ${t}; one of ${known.join(', ')}`);
  return wanted as FfmpegTarget[];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outDir = path.join(root, 'build', 'ffmpeg');
  for (const target of targetsFrom(process.argv.slice(2))) {
    const dest = await fetchPinnedBuild(target, { outDir, cacheDir: path.join(outDir, 'cache') });
    console.log(`fetch-ffmpeg: ${target} → ${path.relative(root, dest)}`);
  }
}
