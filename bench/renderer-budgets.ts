// The renderer's budgets, measured in Debian's Chromium in one run:
// - initial JS (gzip) of the built app, against a blank Vite React page built the same way (≤ 500 KB);
// - app shell to first interactive paint, against the blank page (≤ 2×);
// - the Library grid with 10,000 items in the real app (browser mode): DOM nodes (≤ 400), JS heap
//   growth after scrolling through all of it (≤ 50 MB), and a 3 s scroll's longest frame (≤ 50 ms)
//   and its main-thread work per frame at p95 (≤ 16 ms: 60 fps held), with the frames missed;
// - the session filmstrip with 1,000 takes, scrolled the same way (≤ 16 ms at p95);
// - opening the app on that library: navigation to the canvas's stage with the top bar's figures (≤ 1 s);
// - a finished take: from its job's completion event reaching the window to the take's first video
//   frame painted on the stage (≤ 300 ms).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import react from '@vitejs/plugin-react';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/e2e/support/chromium.ts';
import { serveDirectory } from '../test/e2e/support/static-server.ts';
import { openApp, startApp } from '../test/e2e/renderer/support/app.ts';
import { seedLibrary } from '../test/e2e/renderer/support/seed.ts';
import { compose, generateButton } from '../test/e2e/renderer/support/pages.ts';
import { filmstripScroll, measureScroll, reportScroll } from './support/renderer-frames.ts';
import { reportFigure } from './support/report.ts';

const ROOT = process.cwd();
const PAINT_ROUNDS = 9;

async function buildApp(outDir: string): Promise<void> {
  await build({
    configFile: join(ROOT, 'renderer/vite.config.ts'),
    logLevel: 'silent',
    build: { outDir, emptyOutDir: true, sourcemap: false },
  });
}

/** The comparator: Vite's React template reduced to one component, with the same build target. */
async function buildBlank(dir: string, outDir: string): Promise<void> {
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(
    join(dir, 'index.html'),
    '<!doctype html><html><head><meta charset="UTF-8"><title>Blank</title></head><body><div id="root"></div><script type="module" src="./src/main.jsx"></script></body></html>',
  );
  await writeFile(
    join(dir, 'src/main.jsx'),
    "import { StrictMode } from 'react';\nimport { createRoot } from 'react-dom/client';\nfunction App() { return <main><h1>Vite + React</h1><button>count is 0</button></main>; }\ncreateRoot(document.getElementById('root')).render(<StrictMode><App /></StrictMode>);\n",
  );
  await build({
    root: dir,
    base: './',
    configFile: false,
    logLevel: 'silent',
    plugins: [react()],
    resolve: { alias: { react: join(ROOT, 'node_modules/react'), 'react-dom': join(ROOT, 'node_modules/react-dom') } },
    build: { outDir, emptyOutDir: true, target: 'chrome130' },
  });
}

/** Gzip size of the JS the page loads before it can render: entry scripts and their preloads. */
async function initialJsGzip(outDir: string): Promise<number> {
  const html = await readFile(join(outDir, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\.?\/?([^"]+\.js)"/g)].map((m) => m[1]!);
  let total = 0;
  for (const f of new Set(files)) total += gzipSync(await readFile(join(outDir, f)), { level: 9 }).length;
  return total;
}

/** ms from navigation start to the first frame painted after #root has content, in a fresh context. */
async function firstPaint(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(() => {
    const w = window as unknown as { __painted?: Promise<number> };
    w.__painted = new Promise((resolve) => {
      const check = () => {
        if ((document.getElementById('root')?.childElementCount ?? 0) > 0)
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
        else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    });
  });
  await page.goto(url);
  const ms = await page.evaluate(() => (window as unknown as { __painted: Promise<number> }).__painted);
  await context.close();
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function heapUsed(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  await cdp.detach();
  return usedSize;
}

async function libraryGrid(browser: Browser): Promise<void> {
  const ITEMS = 10_000;
  const app = await startApp({ prepare: (dir) => seedLibrary(dir, ITEMS) });
  try {
    const { page, context } = await openApp(browser, app, { width: 1440, height: 900 });
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('button', { name: /^Library/ })
      .click();
    await page.getByText('10,000 items').waitFor({ timeout: 60_000 });
    const grid = page.getByTestId('library-grid');
    await page.waitForTimeout(500);
    const heapBefore = await heapUsed(page);
    const nodes = () => grid.evaluate((el) => el.querySelectorAll('*').length);
    let maxNodes = await nodes();

    // A 3 s scroll at a steady, fast flick speed, one step per frame (support/renderer-frames.ts).
    const frames = await measureScroll(grid, 'y');
    maxNodes = Math.max(maxNodes, await nodes());

    // Then through all of it, so every page is loaded and every row mounted once.
    for (let i = 0; i < 1000; i++) {
      const done = await grid.evaluate((el) => {
        el.scrollTop += el.clientHeight * 2;
        return el.scrollTop + el.clientHeight >= el.scrollHeight - 2;
      });
      if (i % 10 === 0) maxNodes = Math.max(maxNodes, await nodes());
      if (done) break;
    }
    await page.getByRole('option', { name: /number 0$/ }).waitFor({ timeout: 60_000 });
    maxNodes = Math.max(maxNodes, await nodes());
    const heapAfter = await heapUsed(page);
    const tileNodes = await grid.evaluate((el) => el.querySelector('[role=option]')?.querySelectorAll('*').length ?? 0);

    const allTiles = ITEMS * (tileNodes + 1);
    reportFigure(
      'renderer-grid-dom-nodes',
      maxNodes,
      'nodes',
      maxNodes / allTiles,
      `all ${ITEMS} tiles mounted (${allTiles} nodes); budget 400`,
    );
    const growthMb = (heapAfter - heapBefore) / 1e6;
    reportFigure('renderer-grid-heap-growth', Number(growthMb.toFixed(1)), 'MB', growthMb / 50, 'the 50 MB budget');
    const longest = Math.max(...frames.intervals);
    reportFigure(
      'renderer-grid-longest-frame',
      Number(longest.toFixed(1)),
      'ms',
      longest / 50,
      `the 50 ms budget (${frames.intervals.length} frames in 3 s)`,
    );
    reportScroll('renderer-grid', frames);
    await context.close();
    await stageShown(browser, app.url);
  } finally {
    await app.stop();
  }
}

/**
 * ms from navigation start to the canvas's stage shown with the top bar's spend figure (settings and
 * the ledger answered), on the 10,000-item library, in a fresh context; the median of 5.
 */
async function stageShown(browser: Browser, url: string): Promise<void> {
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.addInitScript(() => {
      const w = window as unknown as { __shown?: Promise<number> };
      w.__shown = new Promise((resolve) => {
        const check = () => {
          if (
            document.querySelector('section[aria-label="Stage"] .stage-screen') &&
            document.querySelector('[data-testid=spend-meter]')
          )
            requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
          else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
    });
    await page.goto(url);
    runs.push(await page.evaluate(() => (window as unknown as { __shown: Promise<number> }).__shown));
    await context.close();
  }
  const ms = median(runs);
  reportFigure('renderer-open-10k-stage', Math.round(ms), 'ms', ms / 1000, 'the 1 s budget (10,000 items)');
}

/**
 * In the page, before Generate: resolves with the ms from the job's completion event reaching the
 * window (the `clipdesk:job-done:` mark, app/useAppEvents.ts) to the first video frame of its take
 * presented on the stage (requestVideoFrameCallback; `loadeddata` and the next frame where it is
 * missing). Watched once a frame, so the take's player is found the frame it is inserted.
 */
function watchStage(): void {
  const w = window as unknown as { __takeShown?: Promise<number> };
  w.__takeShown = new Promise((resolve, reject) => {
    const started = performance.now();
    const done = () => performance.getEntriesByType('mark').find((m) => m.name.startsWith('clipdesk:job-done:'));
    const painted = (at: number) => {
      const mark = done();
      if (mark) resolve(at - mark.startTime);
      else reject(new Error('the take played before its job was reported done'));
    };
    const check = () => {
      const video = document.querySelector<HTMLVideoElement>(
        'section[aria-label="Stage"] video[aria-label^="Take on stage:"]',
      );
      if (video) {
        let settled = false;
        const once = (at: number) => {
          if (!settled) painted(at);
          settled = true;
        };
        if ('requestVideoFrameCallback' in video) video.requestVideoFrameCallback(() => once(performance.now()));
        video.addEventListener('loadeddata', () => requestAnimationFrame(() => once(performance.now())), {
          once: true,
        });
        video.addEventListener('error', () => reject(new Error(`the take's video failed: ${video.error?.message}`)));
      } else if (performance.now() - started > 240_000) reject(new Error('no take on the stage in 240 s'));
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
}

/** A finished take on the stage: a real render on the Local engine, watched on the canvas itself. */
async function takeShown(browser: Browser): Promise<void> {
  const app = await startApp();
  try {
    const { page, context } = await openApp(browser, app, { width: 1440, height: 900 });
    await compose(page, { prompt: 'a lantern on a jetty at dusk', model: /^Motion/, shortest: true });
    await page.evaluate(watchStage);
    await generateButton(page).click();
    const ms = await page.evaluate(() => (window as unknown as { __takeShown: Promise<number> }).__takeShown);
    reportFigure('renderer-take-first-frame', Math.round(ms), 'ms', ms / 300, 'the 300 ms budget (on the stage)');
    await context.close();
  } finally {
    await app.stop();
  }
}

export default async function (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-renderer-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'],
    headless: true,
  });
  try {
    const appOut = join(dir, 'app');
    const blankOut = join(dir, 'blank-dist');
    await buildApp(appOut);
    await buildBlank(join(dir, 'blank'), blankOut);

    const appJs = await initialJsGzip(appOut);
    const blankJs = await initialJsGzip(blankOut);
    reportFigure(
      'renderer-initial-js-gzip',
      Math.round(appJs / 100) / 10,
      'KB',
      appJs / blankJs,
      `a blank Vite React page (${(blankJs / 1000).toFixed(1)} KB); budget 500 KB`,
    );

    const appServer = await serveDirectory(appOut);
    const blankServer = await serveDirectory(blankOut);
    try {
      // Warm the browser once on each, then alternate so a change in machine load hits both sides.
      await firstPaint(browser, blankServer.url);
      await firstPaint(browser, appServer.url);
      const blank: number[] = [];
      const app: number[] = [];
      for (let i = 0; i < PAINT_ROUNDS; i++) {
        blank.push(await firstPaint(browser, blankServer.url));
        app.push(await firstPaint(browser, appServer.url));
      }
      const blankMs = median(blank);
      const appMs = median(app);
      reportFigure(
        'renderer-shell-first-paint',
        Number(appMs.toFixed(1)),
        'ms',
        appMs / blankMs,
        `a blank Vite React page (${blankMs.toFixed(1)} ms); budget 2×`,
      );
    } finally {
      await appServer.close();
      await blankServer.close();
    }

    await libraryGrid(browser);
    await filmstripScroll(browser, dir);
    await takeShown(browser);
  } finally {
    await browser.close();
    await rm(dir, { recursive: true, force: true });
  }
}
