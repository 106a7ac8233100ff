import { existsSync, readdirSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaToolError, createMediaTools } from '../../../../../electron/core/media/index.ts';
import type { MediaTools, ProgressState } from '../../../../../electron/core/media/index.ts';
import { childProcesses, makeMediaFixtures, processesMentioning } from './fixtures.ts';
import type { MediaFixtures } from './fixtures.ts';

let f: MediaFixtures;
let tools: MediaTools;

beforeAll(() => {
  f = makeMediaFixtures();
  tools = createMediaTools({ timeoutMs: 30_000 });
});

afterAll(async () => {
  await tools.dispose();
  await rm(f.dir, { recursive: true, force: true });
});

type Op = (input: string, out: string) => Promise<unknown>;
const operations: Record<string, { run: Op; ext: string }> = {
  probe: { run: (i) => tools.probe(i), ext: 'json' },
  thumbnail: { run: (i, o) => tools.thumbnail(i, o, { width: 160 }), ext: 'jpg' },
  preview: { run: (i, o) => tools.previewProxy(i, o, { maxHeight: 120 }), ext: 'mp4' },
  exportMp4: { run: (i, o) => tools.exportMp4(i, o, { preset: 'ultrafast' }), ext: 'mp4' },
  exportWebm: { run: (i, o) => tools.exportWebm(i, o, { speed: 8 }), ext: 'webm' },
  exportGif: { run: (i, o) => tools.exportGif(i, o, { width: 160, fps: 8 }), ext: 'gif' },
  frameAt: { run: (i, o) => tools.frameAt(i, o, 0.5), ext: 'png' },
  lastFrame: { run: (i, o) => tools.lastFrame(i, o), ext: 'png' },
  contactSheet: { run: (i, o) => tools.contactSheet(i, o, { frames: 4, tileWidth: 80 }), ext: 'png' },
  trim: { run: (i, o) => tools.trim(i, o, { start: 0.2, end: 0.8 }), ext: 'mp4' },
};

function noLeftovers(): void {
  expect(tools.running()).toEqual([]);
  expect(childProcesses()).toEqual([]);
  expect(processesMentioning(f.dir)).toEqual([]);
  expect(readdirSync(f.dir).filter((n) => n.includes('.partial'))).toEqual([]);
}

describe('media tools on a good input', () => {
  it('probes a video', async () => {
    const info = await tools.probe(f.video);
    expect(info.video).toMatchObject({ codec: 'h264', width: 320, height: 180 });
    expect(info.durationSeconds).toBeCloseTo(1, 1);
    expect(info.audio?.codec).toBe('aac');
    expect(info.isImage).toBe(false);
  });

  for (const [name, op] of Object.entries(operations)) {
    if (name === 'probe') continue;
    it(`${name} writes a decodable output`, async () => {
      const out = join(f.dir, `ok-${name}.${op.ext}`);
      await op.run(f.video, out);
      expect(statSync(out).size).toBeGreaterThan(0);
      const info = await tools.probe(out);
      expect(info.video).not.toBeNull();
      noLeftovers();
    });
  }

  it('exports the expected codecs and sizes', async () => {
    expect((await tools.probe(join(f.dir, 'ok-exportWebm.webm'))).video?.codec).toBe('vp9');
    expect((await tools.probe(join(f.dir, 'ok-exportGif.gif'))).video?.codec).toBe('gif');
    expect((await tools.probe(join(f.dir, 'ok-preview.mp4'))).video).toMatchObject({ codec: 'h264', height: 120 });
    expect((await tools.probe(join(f.dir, 'ok-contactSheet.png'))).video).toMatchObject({ width: 160 });
    const trimmed = await tools.probe(join(f.dir, 'ok-trim.mp4'));
    expect(trimmed.durationSeconds).toBeGreaterThan(0.4);
    expect(trimmed.durationSeconds).toBeLessThan(0.8);
  });

  it('reports progress through the parser', async () => {
    const seen: ProgressState[] = [];
    await tools.exportMp4(f.longVideo, join(f.dir, 'progress.mp4'), {
      preset: 'ultrafast',
      onProgress: (p) => seen.push(p),
    });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)?.durationSeconds).toBeCloseTo(2, 1);
    expect(seen.at(-1)?.fraction).toBeGreaterThan(0.9);
  });

  it('thumbnails a still image, and says clearly that a still has no contact sheet', async () => {
    await tools.thumbnail(f.image, join(f.dir, 'still-thumb.jpg'));
    await expect(tools.contactSheet(f.image, join(f.dir, 'still-sheet.png'), { frames: 4 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
  });

  it('says when the requested time is past the end', async () => {
    await expect(tools.frameAt(f.video, join(f.dir, 'late.png'), 30)).rejects.toMatchObject({ code: 'no_output' });
    expect(existsSync(join(f.dir, 'late.png'))).toBe(false);
    noLeftovers();
  });
});

const badInputs: Record<string, { file: (fx: MediaFixtures) => string; codes: string[] }> = {
  'zero-byte': { file: (fx) => fx.zeroByte, codes: ['input_empty'] },
  truncated: { file: (fx) => fx.truncated, codes: ['input_truncated', 'input_invalid'] },
  corrupt: { file: (fx) => fx.corrupt, codes: ['input_truncated', 'input_invalid'] },
  'random bytes': { file: (fx) => fx.garbage, codes: ['input_invalid', 'input_truncated'] },
  'text file': { file: (fx) => fx.text, codes: ['input_invalid', 'input_truncated'] },
  'audio only': { file: (fx) => fx.audioOnly, codes: ['input_no_video'] },
  missing: { file: (fx) => fx.missing, codes: ['input_missing'] },
};

describe('bad inputs to every operation', () => {
  for (const [kind, bad] of Object.entries(badInputs)) {
    for (const [name, op] of Object.entries(operations)) {
      it(`${name} on a ${kind} input fails clearly and leaves no process`, async () => {
        const input = bad.file(f);
        const out = join(f.dir, `bad-${name}-${kind.replace(/\W/g, '')}.${op.ext}`);
        const error = await op.run(input, out).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(MediaToolError);
        const e = error as MediaToolError;
        expect(bad.codes).toContain(e.code);
        expect(e.message).toContain(input.split('/').pop());
        expect(existsSync(out)).toBe(false);
        noLeftovers();
      });
    }
  }
});

describe('process safety', () => {
  it('cancels a running export through its signal and kills the process', async () => {
    const controller = new AbortController();
    const running = tools.exportWebm(f.longVideo, join(f.dir, 'canceled.webm'), {
      speed: 0,
      signal: controller.signal,
    });
    await waitFor(() => tools.running().length === 1 && tools.running()[0]?.started === true);
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'canceled' });
    noLeftovers();
  });

  it('kills a process that runs past its time limit', async () => {
    await expect(
      tools.exportWebm(f.longVideo, join(f.dir, 'slow.webm'), { speed: 0, timeoutMs: 50 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    noLeftovers();
  });

  it('kills everything on dispose (quit) and refuses new work', async () => {
    const own = createMediaTools();
    const a = own.exportWebm(f.longVideo, join(f.dir, 'quit-a.webm'), { speed: 0 }).catch((e: unknown) => e);
    const b = own.exportGif(f.longVideo, join(f.dir, 'quit-b.gif')).catch((e: unknown) => e);
    await waitFor(() => own.running().filter((p) => p.started).length === 2);
    await own.dispose();
    expect(await a).toMatchObject({ code: 'canceled' });
    expect(await b).toMatchObject({ code: 'canceled' });
    expect(own.running()).toEqual([]);
    expect(childProcesses()).toEqual([]);
    await expect(own.thumbnail(f.video, join(f.dir, 'after.jpg'))).rejects.toMatchObject({ code: 'canceled' });
  });

  it('kills a thumbnail (spawned without fluent-ffmpeg) on timeout and on cancel', async () => {
    await expect(
      tools.thumbnail(f.longVideo, join(f.dir, 'slow-thumb.jpg'), { atSeconds: 1, timeoutMs: 1 }),
    ).rejects.toMatchObject({ code: 'timeout' });
    noLeftovers();
    const controller = new AbortController();
    const running = tools.thumbnail(f.longVideo, join(f.dir, 'canceled-thumb.jpg'), {
      atSeconds: 1,
      signal: controller.signal,
    });
    // Checked every turn of the event loop: the child lives for a few milliseconds only.
    while (tools.running()[0]?.started !== true) await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'canceled' });
    expect(existsSync(join(f.dir, 'canceled-thumb.jpg'))).toBe(false);
    noLeftovers();
  });

  it('reports a missing binary clearly', async () => {
    const broken = createMediaTools({
      binaries: { ffmpegPath: join(f.dir, 'no-ffmpeg'), ffprobePath: join(f.dir, 'no-ffprobe') },
    });
    await expect(broken.probe(f.video)).rejects.toMatchObject({ code: 'binary_missing' });
    await expect(broken.thumbnail(f.video, join(f.dir, 'x.jpg'))).rejects.toMatchObject({ code: 'binary_missing' });
    expect(childProcesses()).toEqual([]);
  });

  it('refuses to overwrite the input', async () => {
    await expect(tools.exportMp4(f.video, f.video)).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error('condition not reached');
}
