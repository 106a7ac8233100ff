/**
 * Shared by the 100 MB client transfer benchmarks (bench/client-download.ts, bench/client-upload.ts):
 * the Local engine in its own process, a valid MP4 of an exact size, curl as a child process, and an
 * RSS sampler.
 *
 * The engine runs in a child process (server-process.ts), as a remote service would:
 * curl is a separate process too, so with the engine in the benchmark's own process our side would
 * share one thread with the server's reads and writes while curl would not, and the RSS figure
 * would count the server's buffers.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runFfmpeg } from '../../shared/node/ffmpeg.ts';

const CURL = '/usr/bin/curl';

export interface ServerProcess {
  /** The process, e.g. to sample its RSS. */
  pid: number;
  stop: () => Promise<void>;
}

export interface EngineProcess extends ServerProcess {
  /** `{base_url}`, e.g. `http://127.0.0.1:PORT/v1`. */
  url: string;
  key: string;
}

/** Starts the engine with its data in dataDir, with one enterprise key for `user`. */
export async function startEngineProcess(dataDir: string, user: string): Promise<EngineProcess> {
  const { line, pid, stop } = await startServerProcess(['--engine', dataDir, user]);
  const [url, key] = line.split(' ');
  if (!url || !key) {
    await stop();
    throw new Error(`the engine process printed ${JSON.stringify(line)}`);
  }
  return { url, key, pid, stop };
}

/**
 * Starts the plainest PUT server in a process of its own: `discard` reads and drops the body,
 * `disk` pipes it into a new file named `file`-N through an fs.WriteStream (1 MiB writes) and
 * removes it after answering. Resolves with its URL.
 */
export async function startPlainPutProcess(
  kind: 'discard' | 'disk',
  file = '',
): Promise<ServerProcess & { url: string }> {
  const { line, pid, stop } = await startServerProcess(['--plain', kind, file]);
  return { url: line, pid, stop };
}

const SERVER_PROCESS = fileURLToPath(new URL('./server-process.ts', import.meta.url));

/** Runs server-process.ts in a child process; resolves with the first line it prints. */
async function startServerProcess(args: string[]): Promise<ServerProcess & { line: string }> {
  const child = spawn(process.execPath, ['--no-warnings', SERVER_PROCESS, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the server process ${args[0]} exited with ${code}`)));
      child.once('error', reject);
    });
    return { line, pid: child.pid ?? 0, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface BigVideo {
  path: string;
  size: number;
  /** Where the padding's payload starts: `restamp` changes bytes there. */
  paddingOffset: number;
}

/**
 * Writes an MP4 of exactly `size` bytes: a one-second 320×240 H.264 clip from ffmpeg, then a
 * top-level `free` box that pads it to the size (players and ffprobe skip `free` boxes). The
 * padding starts with random bytes, so every file differs from the last (no upload dedup).
 */
export async function writeBigVideo(path: string, size: number): Promise<BigVideo> {
  const seedPath = `${path}.seed.mp4`;
  try {
    await runFfmpeg(
      [
        '-y',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x240:rate=25:duration=1',
        '-c:v',
        'libx264',
        '-pix_fmt',
        'yuv420p',
        '-movflags',
        '+faststart',
        seedPath,
      ],
      { timeoutMs: 60_000, totalSeconds: 1 },
    );
    const seed = await readFile(seedPath);
    const boxSize = size - seed.length;
    if (boxSize < 8 || boxSize > 0xffffffff) throw new Error(`cannot pad a ${seed.length}-byte clip to ${size} bytes`);
    const header = Buffer.alloc(8);
    header.writeUInt32BE(boxSize, 0);
    header.write('free', 4, 'latin1');
    const handle = await open(path, 'w');
    try {
      await handle.write(Buffer.concat([seed, header]), 0, seed.length + 8, 0);
      const chunk = Buffer.alloc(1 << 20);
      for (let at = seed.length + 8; at < size; at += chunk.length) {
        const n = Math.min(chunk.length, size - at);
        await handle.write(chunk, 0, n, at);
      }
    } finally {
      await handle.close();
    }
    const video = { path, size, paddingOffset: seed.length + 8 };
    await restamp(video);
    return video;
  } finally {
    await rm(seedPath, { force: true });
  }
}

/** Overwrites the first 32 padding bytes with random ones: same size, new sha256. */
export async function restamp(video: BigVideo): Promise<void> {
  const handle = await open(video.path, 'r+');
  try {
    await handle.write(randomBytes(32), 0, 32, video.paddingOffset);
  } finally {
    await handle.close();
  }
}

/** Runs curl with args; rejects with its stderr when it exits non-zero. */
export function runCurl(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(CURL, [...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`curl exited with ${code}: ${stderr.trim()}`));
    });
  });
}

/** Runs `openssl dgst -sha256 FILE` (SHA-NI where the CPU has it); rejects if it fails. */
export function sha256WithOpenssl(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/openssl', ['dgst', '-sha256', path], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`openssl exited with ${code}`))));
  });
}

/** Samples this process's RSS every 10 ms; stop() returns the peak growth over the start in bytes. */
export function sampleRss(): { stop(): number } {
  globalThis.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return peak - before;
    },
  };
}

/** Another process's resident set in bytes, from /proc (Linux); NaN where /proc is missing. */
export function processRss(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE_BYTES;
  } catch {
    return Number.NaN;
  }
}

/** Runs fn while sampling another process's RSS every 10 ms; resolves with fn's value and the peak. */
export async function whileSamplingRss<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = processRss(pid);
  const timer = setInterval(() => (peak = Math.max(peak, processRss(pid))), 10);
  try {
    const value = await fn();
    return { value, peak: Math.max(peak, processRss(pid)) };
  } finally {
    clearInterval(timer);
  }
}

/** Linux's page size on the machines these benchmarks run on (x86-64, arm64 with 4 KiB pages). */
const PAGE_BYTES = 4096;

/** MB/s (10^6 bytes) for `bytes` in `ms` milliseconds. */
export function mbPerSecond(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}
