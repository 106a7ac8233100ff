// Browser mode, the real core and the embedded Local engine: a video job survives a reload of the
// page and a restart of the core (the job journal holds the generation id; the restarted core
// polls it instead of submitting again, so there is one item, charged once); then "Make
// variations ×3" on that video makes three videos that each link back to it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { startApp } from './support/app.ts';
import type { RunningApp } from './support/app.ts';
import { expect, test } from './support/fixtures.ts';
import { RENDER_TIMEOUT_MS, compose, expectNoPageErrors, generateButton, nav } from './support/pages.ts';

const POLL = { timeout: 15_000 };
const PROMPT = 'a lighthouse that survives a restart';
const job = (page: Page, prompt: string) => page.getByRole('listitem', { name: `Job: ${prompt}` });
const state = (page: Page, prompt: string) => job(page, prompt).getByTestId('job-state');

test.describe('asynchronous generations and variations', () => {
  test('a job survives a page reload and a core restart; Make variations ×3 links each result to its source', async ({
    browser,
  }) => {
    // Five renders of the Local engine's longest video at 720p (one run twice, across the restart, and three
    // variations) on a shared machine.
    test.setTimeout(5 * RENDER_TIMEOUT_MS);
    // Not the fixtures' `page`/`app`: the test needs the same data directory across two runs of the
    // core. One data directory for both runs of the core (the fixture's app would get a fresh one);
    // the last --data wins, so startApp's own temporary directory stays unused.
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-e2e-async-'));
    // With a keychain, as a user's desktop has: the engine's key outlives the run. Without one the
    // key is for one run only and revoked on close, and the service rightly refuses to resume a
    // generation whose key was revoked.
    const start = () => startApp({ args: ['--data', dataDir], keychain: true });
    let app: RunningApp | null = await start();
    try {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(app.url);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();

      // The longest video the Local engine makes, so it is still running when the core stops; at
      // 720p rather than the default 1080p, since its three variations render at its size too.
      await compose(page, { prompt: PROMPT, model: /Motion/ });
      await page.getByLabel('Size').selectOption('720p');
      const duration = page.getByRole('slider', { name: 'Duration' });
      await duration.focus();
      await duration.press('End');
      await generateButton(page).click();
      await page.getByText('Job queued').last().waitFor();

      await nav(page, 'Queue');
      // The service's own step, from polling GET /generations/:id.
      await expect(job(page, PROMPT).getByRole('status', { name: 'Step' })).toBeVisible(POLL);
      await screenshot(page, 'async-queue-step');

      // A reload of the page: the job is still there, still running on the service.
      await page.reload();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await nav(page, 'Queue');
      await expect.poll(() => state(page, PROMPT).textContent(), POLL).toMatch(/Generating|Downloading|Done/);

      // A restart of the core mid-generation.
      await app.stop();
      app = await start();
      await page.goto(app.url);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await nav(page, 'Queue');
      await expect.poll(() => state(page, PROMPT).textContent(), { timeout: RENDER_TIMEOUT_MS }).toBe('Done');
      expect(
        await job(page, PROMPT)
          .getByText(/Attempt 2/)
          .count(),
      ).toBe(0);

      // Nothing made twice: one item with this prompt in the Library.
      await nav(page, 'Library');
      const tiles = page.getByRole('option', { name: new RegExp(`${PROMPT}$`) });
      await expect.poll(() => tiles.count(), POLL).toBe(1);

      // Make variations ×3 of it.
      await tiles.first().click();
      const details = page.getByRole('complementary', { name: 'Item details' });
      await details.getByLabel('How many variations').selectOption('3');
      await details.getByRole('button', { name: 'Make variations ×3' }).click();
      await expect(page.getByRole('status', { name: 'Variations' })).toContainText(PROMPT.slice(0, 30));
      await screenshot(page, 'async-compose-variations');
      await page.getByRole('button', { name: /^Make variations ×3/ }).click();
      await page.getByText('Job queued').last().waitFor();

      await nav(page, 'Queue');
      // One job, three renders of the 8 s source.
      await expect
        .poll(() => page.getByTestId('job-state').allTextContents(), { timeout: 3 * RENDER_TIMEOUT_MS })
        .toEqual(['Done', 'Done']);

      await nav(page, 'Library');
      // The three stack under their source: one tile with the count, which opens in place.
      const stack = page.getByRole('option', { name: new RegExp(`${PROMPT} — stack of 4 takes, closed$`) });
      await expect.poll(() => stack.count(), POLL).toBe(1);
      await stack.getByTestId('stack-toggle').click();
      const takes = page.getByRole('option', { name: new RegExp(PROMPT) });
      await expect(takes).toHaveCount(4);
      // Three of the four name the fourth as their source and link back to it.
      let variations = 0;
      let aVariation = -1;
      for (let i = 0; i < 4; i++) {
        await takes.nth(i).click();
        await details.getByText('Model', { exact: true }).waitFor();
        if ((await details.getByText('Variation of', { exact: true }).count()) === 0) continue;
        variations++;
        aVariation = i;
        await expect(details.getByRole('button', { name: `“${PROMPT}”` })).toBeVisible();
        if (variations === 1) await screenshot(page, 'async-variation-of');
      }
      expect(variations).toBe(3);
      // The link opens the source.
      await takes.nth(aVariation).click();
      await details.getByRole('button', { name: `“${PROMPT}”` }).click();
      await expect(details.getByText('Variation of', { exact: true })).toHaveCount(0);
      expectNoPageErrors(errors);
      await context.close();
    } finally {
      await app?.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
