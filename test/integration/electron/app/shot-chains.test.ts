import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { startBrowserMode, type BrowserMode } from '../../../../electron/host/browser-mode.ts';
import { createLibraryStore, openDatabase } from '../../../../electron/core/library/index.ts';
import { restoreChainsFromSidecars } from '../../../../electron/app/shot-lineage.ts';
import type { IpcClient } from '../../../../shared/ipc/client.ts';
import type { Job, JobRequestInput } from '../../../../shared/ipc/schemas/jobs.ts';
import { ffprobePath } from '../../../../shared/node/ffmpeg.ts';

/**
 * docs/workflows.md, shot chains, through the real core and Local engine in browser mode: continue a shot
 * twice, lineage in the index and the sidecars, a rebuild from sidecars alone, trims and the
 * stitched sequence checked with ffprobe.
 */
const root = fileURLToPath(new URL('../../../..', import.meta.url));
let dir: string;
let mode: BrowserMode;
let ipc: IpcClient;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-chains-'));
  mode = await startBrowserMode({ root, version: '0.0.0-test', dataDir: dir, background: false });
  const cookie = `clipdesk_${mode.host.port}=${mode.host.secret}`;
  ipc = createORPCClient(new RPCLink({ url: `${mode.host.origin}/rpc`, headers: { cookie } }));
});

afterAll(async () => {
  await mode?.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(request: JobRequestInput): Promise<Job> {
  const controller = new AbortController();
  const stream = await ipc.events.subscribe({ types: ['job.updated'] }, { signal: controller.signal });
  const job = await ipc.jobs.submit(request);
  try {
    for await (const ev of stream) {
      if (ev.type !== 'job.updated' || ev.job.id !== job.id) continue;
      if (ev.job.state === 'done' || ev.job.state === 'failed') return ev.job;
    }
  } finally {
    controller.abort();
  }
  throw new Error('the event stream ended');
}

/** "Continue this shot": the parent's last frame as the start frame, the same model, the parent recorded. */
async function continueShot(parentId: string): Promise<{ job: Job; frameSha256: string }> {
  const frame = await ipc.library.useLastFrame({ id: parentId });
  const frameSha256 = createHash('sha256').update(readFileSync(frame.path)).digest('hex');
  const job = await run({
    kind: 'video',
    prompt: 'the fox keeps running',
    model: 'clipdesk/motion',
    size: '480p',
    duration: 2,
    startFrame: { kind: 'path', path: frame.path },
    parentItemId: parentId,
  });
  return { job, frameSha256 };
}

async function ffprobe(file: string) {
  const { stdout } = await promisify(execFile)(ffprobePath(), [
    '-v',
    'error',
    '-show_streams',
    '-show_format',
    '-of',
    'json',
    file,
  ]);
  return JSON.parse(stdout) as {
    streams: { codec_type: string; width?: number; height?: number; avg_frame_rate?: string }[];
    format: { duration: string };
  };
}

const sidecarOf = (file: string) => JSON.parse(readFileSync(`${file}.json`, 'utf8')) as Record<string, unknown>;

describe('shot chains', () => {
  let ids: string[] = [];
  let frames: string[] = [];
  let downloads: string;

  it('continuing a shot twice makes a chain of three, in order, with lineage in the sidecars', async () => {
    downloads = (await ipc.settings.get()).downloadDir;
    // Different sizes and frame rates: the first shot on Local Swift (360p, 24 fps), the others
    // with a start frame on optimal (480p).
    const first = await run({
      kind: 'video',
      prompt: 'a red fox at dawn',
      model: 'clipdesk/motion',
      size: '360p',
      duration: 2,
      routing: 'cheapest',
    });
    expect(first.error).toBeNull();
    const a = first.result!.itemIds[0]!;
    const second = await continueShot(a);
    expect(second.job.error).toBeNull();
    const b = second.job.result!.itemIds[0]!;
    const third = await continueShot(b);
    expect(third.job.error).toBeNull();
    const c = third.job.result!.itemIds[0]!;
    ids = [a, b, c];
    frames = [second.frameSha256, third.frameSha256];

    const chain = await ipc.library.chain({ id: c });
    expect(chain.chainId).toBe(a);
    expect(chain.shots.map((s) => [s.itemId, s.position, s.parentId])).toEqual([
      [a, 1, null],
      [b, 2, a],
      [c, 3, b],
    ]);
    expect(chain.shots[1]!.sourceImageSha256).toBe(second.frameSha256);
    expect(chain.shots[2]!.sourceImageSha256).toBe(third.frameSha256);
    // Tiles get a badge.
    const page = await ipc.library.query({ media: 'video' });
    expect(page.items.find((i) => i.item.id === b)?.chain).toEqual({ chainId: a, position: 2, length: 3 });

    const entries = await Promise.all(ids.map((id) => ipc.library.get({ id })));
    const sidecars = entries.map((e) => sidecarOf(e.localPath!));
    // The first shot's sidecar was written before it had a successor: it is updated when it gets one.
    expect(sidecars[0]!['lineage']).toEqual({
      chainId: a,
      position: 1,
      parentId: null,
      sourceImageSha256: null,
      trim: null,
    });
    expect(sidecars[1]!['lineage']).toEqual({
      chainId: a,
      position: 2,
      parentId: a,
      sourceImageSha256: second.frameSha256,
      trim: null,
    });
    expect(sidecars[2]!['lineage']).toMatchObject({ chainId: a, position: 3, parentId: b });
    for (const [n, sidecar] of sidecars.entries()) {
      expect(sidecar['routing']).toBe(n === 0 ? 'cheapest' : 'optimal');
      expect(sidecar['providerName']).toMatch(/^Local \w+ \(procedural\)$/);
    }
    expect(sidecars[1]!['sourceImage']).toMatch(/^clipdesk-media:/);
    expect(sidecars[1]!['sourceImageSha256']).toBe(second.frameSha256);
    expect(sidecars[0]!['sourceImage']).toBeNull();
  });

  it('a library index rebuilt from sidecars alone keeps the chain', async () => {
    const db = openDatabase(path.join(dir, 'rebuilt.db'));
    try {
      const store = createLibraryStore({ db, now: Date.now, retentionDays: () => 30 });
      expect(store.chains.chainOf(ids[2]!)).toEqual([]);
      expect(await restoreChainsFromSidecars(store, downloads)).toBe(3);
      const chain = store.chains.chainOf(ids[1]!);
      expect(chain.map((s) => [s.itemId, s.position, s.parentId, s.sourceSha256])).toEqual([
        [ids[0], 1, null, null],
        [ids[1], 2, ids[0], frames[0]],
        [ids[2], 3, ids[1], frames[1]],
      ]);
      // Once per index.
      expect(await restoreChainsFromSidecars(store, downloads)).toBe(0);
    } finally {
      db.close();
    }
  });

  it('exports the sequence to the download folder: one video stream, one size and rate, the shots back to back', async () => {
    const probes = await Promise.all(ids.map(async (id) => ffprobe((await ipc.library.get({ id })).localPath!)));
    const sizes = probes.map((p) => p.streams.find((s) => s.codec_type === 'video')!);
    expect(new Set(sizes.map((s) => `${s.width}x${s.height}`)).size).toBeGreaterThan(1);
    const sum = probes.reduce((t, p) => t + Number(p.format.duration), 0);

    const out = await ipc.media.sequence({ chainId: ids[0]!, purpose: 'export' });
    expect(out.path.startsWith(path.join(downloads, 'exports') + path.sep)).toBe(true);
    expect(out.mime).toBe('video/mp4');
    const probe = await ffprobe(out.path);
    const video = probe.streams.filter((s) => s.codec_type === 'video');
    expect(video).toHaveLength(1);
    expect([video[0]!.width, video[0]!.height]).toEqual([sizes[0]!.width, sizes[0]!.height]);
    expect(video[0]!.avg_frame_rate).toBe(sizes[0]!.avg_frame_rate);
    expect(Math.abs(Number(probe.format.duration) - sum)).toBeLessThan(0.3);

    const preview = await ipc.media.sequence({ chainId: ids[0]!, purpose: 'preview' });
    expect(preview.path.startsWith(downloads)).toBe(false);
    expect(existsSync(preview.path)).toBe(true);
  });

  it('a trimmed shot: its in and out points shape the sequence, its sidecar and its last frame', async () => {
    const [a, b] = ids as [string, string, string];
    const chain = await ipc.library.setShotTrim({ id: b, start: 0.5, end: 1.5 });
    expect(chain.shots[1]!.trim).toEqual({ start: 0.5, end: 1.5 });
    const entry = await ipc.library.get({ id: b });
    expect(sidecarOf(entry.localPath!)['lineage']).toMatchObject({ position: 2, trim: { start: 0.5, end: 1.5 } });

    const lengths = await Promise.all(
      ids.map(async (id) => Number((await ffprobe((await ipc.library.get({ id })).localPath!)).format.duration)),
    );
    const out = await ipc.media.sequence({ chainId: a, purpose: 'export' });
    const duration = Number((await ffprobe(out.path)).format.duration);
    expect(Math.abs(duration - (lengths[0]! + 1 + lengths[2]!))).toBeLessThan(0.3);

    // The trimmed clip's own export (media.trim) goes to the download folder too.
    const trimmed = await ipc.media.trim({ id: b, start: 0.5, end: 1.5 });
    expect(trimmed.path.startsWith(path.join(downloads, 'exports'))).toBe(true);
    expect(Math.abs(Number((await ffprobe(trimmed.path)).format.duration) - 1)).toBeLessThan(0.2);
    const gif = await ipc.library.export({ id: a, format: 'gif' });
    expect(gif.path.startsWith(path.join(downloads, 'exports'))).toBe(true);

    const cleared = await ipc.library.setShotTrim({ id: b, clear: true });
    expect(cleared.shots[1]!.trim).toBeNull();
  });

  it('a moved shot: the index, every moved sidecar and the badges follow; lineage stays', async () => {
    const [a, b, c] = ids as [string, string, string];
    const controller = new AbortController();
    const stream = await ipc.events.subscribe({ types: ['library.changed'] }, { signal: controller.signal });
    const chain = await ipc.library.moveShot({ id: c, position: 1 });
    expect(chain.chainId).toBe(a);
    expect(chain.shots.map((s) => [s.itemId, s.position, s.parentId])).toEqual([
      [c, 1, b],
      [a, 2, null],
      [b, 3, a],
    ]);
    for await (const ev of stream) {
      if (ev.type === 'library.changed' && ev.change.reason === 'chain') {
        expect([...ev.change.ids].sort()).toEqual([a, b, c].sort());
        break;
      }
    }
    controller.abort();
    const sidecars = await Promise.all(
      [a, b, c].map(async (id) => sidecarOf((await ipc.library.get({ id })).localPath!)),
    );
    expect(sidecars.map((s) => (s['lineage'] as { position: number }).position)).toEqual([2, 3, 1]);
    const page = await ipc.library.query({ media: 'video' });
    expect(page.items.find((i) => i.item.id === c)?.chain).toEqual({ chainId: a, position: 1, length: 3 });
    // The sequence follows the new order; moving back restores the old one.
    expect((await ipc.library.moveShot({ id: c, position: 3 })).shots.map((s) => s.itemId)).toEqual([a, b, c]);
    await expect(ipc.library.moveShot({ id: c, position: 0 })).rejects.toThrow();
  });
});
