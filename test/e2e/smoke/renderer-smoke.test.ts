import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium, screenshot } from '../support/chromium.ts';
import { serveDirectory } from '../support/static-server.ts';

// The smallest proof that the toolchain works end to end: Vite's build of the renderer loads in
// Debian's Chromium and React mounts into #root without a page error.
const built = join(process.cwd(), 'dist', 'renderer');

describe('renderer build in Chromium', () => {
  let browser: Browser;
  let server: Awaited<ReturnType<typeof serveDirectory>>;

  beforeAll(async () => {
    if (!existsSync(join(built, 'index.html')))
      throw new Error('dist/renderer is missing: run `npm run build:renderer` first');
    server = await serveDirectory(built);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders the app shell', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    await page.waitForFunction(() => (document.getElementById('root')?.childElementCount ?? 0) > 0);
    expect(await page.title()).toBe('Clipdesk');
    await screenshot(page, 'smoke-renderer');
    // A page that cannot reach its backend may log, but must not throw.
    expect(errors).toEqual([]);
  });
});
