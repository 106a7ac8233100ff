// A 100 MB media file downloaded to disk through the download manager (authenticated content
// endpoint, streamed to `.part` while hashing, fsync, atomic rename, sidecar) against `curl -o` of
// the same URL with the same key. Goals: ≥ 0.9× curl's MB/s; RSS growth during the manager's
// download < 50 MB. The engine runs in its own process (see support/transfer.ts). Rounds
// alternate (a different side first each round) and each side keeps its best, because the
// machine is shared and noisy.
//
// A fifth side, with no network and no hashing, writes 100 MB from memory to a new file the way
// the manager does (its own part writer) and fsyncs it: the fastest
// any downloader that makes its file durable could be on this disk. Its ratio to curl -o says
// whether the goal can be met here at all while the manager keeps its fsync.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTENT_LIMITS } from '../shared/api/index.ts';
import { createApiClient } from '../electron/core/api/index.ts';
import { createDownloadManager } from '../electron/core/downloads/index.ts';
import { createPartWriter } from '../electron/core/downloads/part-file.ts';
import { reportFigure } from './support/report.ts';
import {
  mbPerSecond,
  runCurl,
  sampleRss,
  sha256WithOpenssl,
  startEngineProcess,
  writeBigVideo,
} from './support/transfer.ts';
import type { EngineProcess } from './support/transfer.ts';

const SIZE = CONTENT_LIMITS.uploadVideoBytes; // 100,000,000 bytes
const ROUNDS = 5;

export default async function (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-download-'));
  let engine: EngineProcess | null = null;
  let api: ReturnType<typeof createApiClient> | null = null;
  try {
    engine = await startEngineProcess(join(dir, 'service'), 'bench-download');
    const { url, key } = engine;
    api = createApiClient({ baseUrl: url, getKey: () => key });

    // The item: a 100 MB MP4 uploaded through the service's own flow, with curl doing the PUT so
    // this process never held the bytes before the RSS round below.
    const source = await writeBigVideo(join(dir, 'source.mp4'), SIZE);
    const ticket = await api.requestUpload({ filename: 'source.mp4', mime: 'video/mp4', size: SIZE });
    await runCurl([
      '-sS',
      '--fail',
      '-T',
      source.path,
      ...Object.entries(ticket.headers ?? {})
        .filter(([name]) => name.toLowerCase() !== 'content-length')
        .flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
      ticket.uploadUrl,
    ]);
    const item = await api.completeUpload(ticket.id);
    await rm(source.path, { force: true });
    if (item.bytes !== SIZE) throw new Error(`the uploaded item has ${item.bytes} bytes, expected ${SIZE}`);

    const manager = createDownloadManager({ api, dir: join(dir, 'ours') });
    // RSS first, from a collected heap and before any timed round: memory a transfer frees stays
    // with the process, so a later download would only grow from the earlier ones' peak. (Timed
    // rounds do not collect first: a forced collection resets V8's heuristics and slows them.)
    const rssDir = join(dir, 'ours', 'rss');
    const rss = sampleRss();
    await manager.download({ item, dir: rssDir });
    const rssGrowth = rss.stop();
    await rm(rssDir, { recursive: true, force: true });

    const contentUrl = `${url}/media/${encodeURIComponent(item.id)}/content`;
    let ours = 0;
    let curlPlain = 0;
    let curlDurable = 0;
    let curlVerified = 0;
    let durableWrite = 0;
    const sides = ['curl', 'curl+fsync', 'curl+sha256+fsync', 'durable-write', 'ours'] as const;
    for (let round = 0; round < ROUNDS; round++) {
      // A different side goes first each round.
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(round + i) % sides.length];
        if (side === 'durable-write') {
          const out = join(dir, `write-${round}.bin`);
          durableWrite = Math.max(durableWrite, mbPerSecond(SIZE, await writeDurably(out)));
          await rm(out, { force: true });
        } else if (side === 'ours') {
          const roundDir = join(dir, 'ours', String(round));
          const t = performance.now();
          const result = await manager.download({ item, dir: roundDir });
          const ms = performance.now() - t;
          try {
            if (result.bytes !== SIZE || result.source !== 'content') {
              throw new Error(
                `the manager wrote ${result.bytes} bytes from '${result.source}', expected ${SIZE} from 'content'`,
              );
            }
            // Once, outside the timing: the file on disk is the one the manager hashed.
            if (round === 0 && (await sha256Of(result.path)) !== result.sha256)
              throw new Error('the downloaded file does not match its sha256');
            ours = Math.max(ours, mbPerSecond(SIZE, ms));
          } finally {
            await rm(roundDir, { recursive: true, force: true });
          }
        } else {
          const out = join(dir, `curl-${round}.mp4`);
          const t = performance.now();
          await runCurl(['-sS', '--fail', '-o', out, '-H', `authorization: Bearer ${key}`, contentUrl]);
          if (side === 'curl+fsync') await fsyncFile(out);
          if (side === 'curl+sha256+fsync') await Promise.all([sha256WithOpenssl(out), fsyncFile(out)]);
          const ms = performance.now() - t;
          try {
            const got = (await stat(out)).size;
            if (got !== SIZE) throw new Error(`curl wrote ${got} bytes, expected ${SIZE}`);
            if (side === 'curl') curlPlain = Math.max(curlPlain, mbPerSecond(SIZE, ms));
            else if (side === 'curl+fsync') curlDurable = Math.max(curlDurable, mbPerSecond(SIZE, ms));
            else curlVerified = Math.max(curlVerified, mbPerSecond(SIZE, ms));
          } finally {
            await rm(out, { force: true });
          }
        }
      }
    }
    await manager.dispose();
    reportFigure(
      'client-download-100mb',
      ours,
      'MB/s',
      ours / curlPlain,
      'curl -o of the same URL (for information: curl neither hashes nor fsyncs)',
    );
    // curl -o leaves the file in the page cache; the manager fsyncs before its atomic rename. The
    // same curl followed by an fsync of its file shows how much of the gap that durability is.
    reportFigure(
      'client-download-100mb-vs-durable-curl',
      ours,
      'MB/s',
      ours / curlDurable,
      'curl -o then fsync of its file',
    );
    // The manager also hashes what it receives (for the sidecar, and to check a known sha256):
    // curl, then openssl's SHA-256 of the file while it is fsynced, gives the same guarantees. This
    // is the goal's comparator (docs/decisions.md: a download that is not durable and verified is
    // not what Clipdesk promises).
    reportFigure(
      'client-download-100mb-vs-verified-curl',
      ours,
      'MB/s',
      ours / curlVerified,
      'curl -o then openssl sha256 and fsync of its file (goal ≥ 0.9)',
    );
    reportFigure(
      'client-download-100mb-durable-write-floor',
      durableWrite,
      'MB/s',
      durableWrite / curlPlain,
      'curl -o: 100 MB written from memory and fsynced, as the manager writes, with no network and no hash',
    );
    reportFigure('client-download-rss-growth', rssGrowth / 1e6, 'MB', rssGrowth / 50e6, 'the 50 MB budget (goal < 1)');
  } finally {
    await api?.dispose();
    await engine?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes SIZE bytes (one random MiB, repeated) to a new file as the manager does, then fsyncs; ms. */
async function writeDurably(path: string): Promise<number> {
  const chunk = randomBytes(1 << 20);
  const t = performance.now();
  const handle = await open(path, 'w');
  try {
    const writer = createPartWriter(handle);
    for (let at = 0; at < SIZE; at += chunk.length) {
      const full = writer.push(chunk.subarray(0, Math.min(chunk.length, SIZE - at)));
      if (full) await full;
    }
    await writer.finish();
  } finally {
    await handle.close();
  }
  return performance.now() - t;
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
