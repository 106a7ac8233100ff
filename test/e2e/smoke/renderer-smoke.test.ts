import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test as base } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { serveDirectory } from '../support/static-server.ts';

// The smallest proof that the toolchain works end to end: Vite's build of the renderer loads in
// Debian's Chromium and React mounts into #root without a page error.
const built = join(process.cwd(), 'dist', 'renderer');

/** The built renderer on a static server with no backend, closed after the test. */
const test = base.extend<{ servedUrl: string }>({
  // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from this pattern
  servedUrl: async ({}, use) => {
    if (!existsSync(join(built, 'index.html')))
      throw new Error('dist/renderer is missing: run `npm run build:renderer` first');
    const server = await serveDirectory(built);
    try {
      await use(server.url);
    } finally {
      await server.close();
    }
  },
});

test.describe('renderer build in Chromium', () => {
  test('renders the app shell', async ({ page, servedUrl }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(servedUrl);
    await page.waitForFunction(() => (document.getElementById('root')?.childElementCount ?? 0) > 0);
    expect(await page.title()).toBe('Clipdesk');
    await screenshot(page, 'smoke-renderer');
    // A page that cannot reach its backend may log, but must not throw.
    expect(errors).toEqual([]);
  });
});
