// The renderer benchmark's scroll measurements (bench/renderer-budgets.ts, docs/benchmarks.md): a
// steady scroll of a list, one step a frame, timing both each frame's interval (what the screen
// shows: 16.7 ms at 60 Hz however light the frame) and each frame's main-thread work (what the goal
// "main-thread frames ≤ 16 ms" bounds), and the filmstrip of a 1,000-take session.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import type { Browser, Locator } from 'playwright-core';
import { build } from 'vite';
import { serveDirectory } from '../../test/e2e/support/static-server.ts';
import { percentile, reportFigure } from './report.ts';

export interface ScrollFrames {
  /** rAF to rAF, ms: a vsync (16.7 ms at 60 Hz) for every frame shown, more for a frame missed. */
  intervals: number[];
  /** From a frame's start (its rAF time) to the first task after its rendering: main-thread ms. */
  work: number[];
}

/**
 * In the page: a 3 s scroll at 4,000 px/s (about 20 Library rows a second), one step per frame. A
 * message posted from each frame's rAF runs as the first task after that frame's style, layout and
 * paint, so its time less the frame's start is the main thread's work on the frame, scroll handlers
 * (the virtual list's re-render) included.
 */
function scrollAndMeasure(el: Element, axis: 'x' | 'y'): Promise<ScrollFrames> {
  const intervals: number[] = [];
  const work: number[] = [];
  const channel = new MessageChannel();
  let frameStart = 0;
  channel.port1.onmessage = () => work.push(performance.now() - frameStart);
  const speed = 4;
  return new Promise((resolve) => {
    let start = -1;
    let last = 0;
    const step = (t: number) => {
      if (start < 0) start = t;
      else intervals.push(t - last);
      last = t;
      frameStart = t;
      if (axis === 'y') el.scrollTop = (t - start) * speed;
      else el.scrollLeft = (t - start) * speed;
      channel.port2.postMessage(null);
      if (t - start < 3000) requestAnimationFrame(step);
      else setTimeout(() => resolve({ intervals, work: work.slice(1) }), 100);
    };
    requestAnimationFrame(step);
  });
}

export function measureScroll(scroller: Locator, axis: 'x' | 'y'): Promise<ScrollFrames> {
  return scroller.evaluate(scrollAndMeasure, axis);
}

/** Frames that took longer than one and a half vsyncs: the screen showed the previous one again. */
function missed(intervals: readonly number[]): number {
  return intervals.filter((ms) => ms > 25).length;
}

/** The figures of one scroll: main-thread work at p95 against 16 ms, and the frames missed. */
export function reportScroll(prefix: string, frames: ScrollFrames): void {
  const work = percentile(frames.work, 95);
  const longest = Math.max(...frames.intervals);
  const interval = percentile(frames.intervals, 95);
  reportFigure(
    `${prefix}-frame-work-p95`,
    Number(work.toFixed(1)),
    'ms',
    work / 16,
    `the 16 ms budget (main-thread work per frame; ${frames.work.length} frames)`,
  );
  reportFigure(
    `${prefix}-frame-interval-p95`,
    Number(interval.toFixed(1)),
    'ms',
    interval / (1000 / 60),
    `one 60 Hz vsync (${missed(frames.intervals)} of ${frames.intervals.length} frames missed; longest ${longest.toFixed(1)} ms)`,
  );
  if (process.env.BENCH_DEBUG)
    console.log(prefix, 'work', JSON.stringify(frames.work.map((f) => Math.round(f * 10) / 10)));
}

/** A small RGB PNG (a gradient), so that each thumbnail is a real image for the browser to decode. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'ascii'), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set([x % 256, y % 256, (x * y) % 256], y * (width * 3 + 1) + 1 + x * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The session filmstrip with 1,000 finished takes (bench/support/filmstrip-harness): the canvas's
 * own component and styles, each take's thumbnail at a URL of its own, scrolled as the Library is.
 */
export async function filmstripScroll(browser: Browser, dir: string): Promise<void> {
  const outDir = join(dir, 'filmstrip');
  await build({
    root: join(process.cwd(), 'bench/support/filmstrip-harness'),
    base: './',
    configFile: false,
    logLevel: 'silent',
    plugins: [react()],
    build: { outDir, emptyOutDir: true, target: 'chrome130' },
  });
  await writeFile(join(outDir, 'thumb.png'), png(256, 144));
  const server = await serveDirectory(outDir);
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(new URL('?takes=1000', server.url).href);
    const scroller = page.locator('.film-scroll');
    await page.getByRole('list', { name: /^Takes of Take 999:/ }).waitFor();
    // Only the columns near the view are mounted; the scroll length is the whole session's.
    const length = await scroller.evaluate((el) => el.scrollWidth);
    if (length < 1000 * 140) throw new Error(`the filmstrip scrolls ${length} px, not 1,000 takes' length`);
    await page.waitForTimeout(500);
    reportScroll('renderer-filmstrip', await measureScroll(scroller, 'x'));
  } finally {
    await context.close();
    await server.close();
  }
}
