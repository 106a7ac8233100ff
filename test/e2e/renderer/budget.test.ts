import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { formatPrice } from '../../../renderer/src/lib/format.ts';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, generateButton, nav, pickModel } from './support/pages.ts';

/** IPC round trips and job events take a moment on a loaded 2-core machine. */
const POLL = { timeout: 15_000 };
const RUN = { timeout: 120_000 };
const job = (page: Page, prompt: string) => page.getByRole('listitem', { name: `Job: ${prompt}` });
const state = (page: Page, prompt: string) => job(page, prompt).getByTestId('job-state');

async function composeImage(page: Page, prompt: string): Promise<void> {
  await nav(page, 'Compose');
  await page.getByRole('radio', { name: 'Image' }).click();
  await pickModel(page, /Still/);
  await page.getByLabel('Prompt', { exact: true }).fill(prompt);
  // The submit's answer, not its toast: a held job's "Job held" notice (or another job's "Take
  // ready") can arrive just after "Job queued" and become the newest toast of the collapsed stack.
  const submitted = page.waitForResponse((r) => r.url().endsWith('/rpc/jobs/submitBatch') && r.ok());
  await generateButton(page).click();
  await submitted;
}

/** The price a finished job's row shows (its response's price). */
async function shownPrice(page: Page, prompt: string): Promise<number> {
  const meta = await job(page, prompt).locator('.job-meta').textContent();
  const price = /\$(\d+\.\d+)/.exec(meta ?? '')?.[1];
  expect(price, `a price in "${meta}"`).toBeDefined();
  return Number(price);
}

test.describe('budgets', () => {
  test('over the daily cap a job is held; Submit once anyway runs it, a raised cap starts the next; the total is the finished jobs', async ({
    page,
    pageErrors,
  }) => {
    // One job before any cap.
    await composeImage(page, 'a paper kite');
    await nav(page, 'Queue');
    await expect.poll(() => state(page, 'a paper kite').textContent(), RUN).toBe('Done');

    // A tiny cap: the next job would pass it.
    await nav(page, 'Settings');
    await page.getByLabel('Daily cap (USD)').fill('0.001');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.getByText('Budget saved').last().waitFor();

    await composeImage(page, 'a second paper kite');
    await nav(page, 'Queue');
    const held = job(page, 'a second paper kite').getByRole('status', { name: 'Held' });
    await expect(held).toContainText(/Over today's budget \(\$0\.\d+ of \$0\.0010\)/, POLL);
    expect(await state(page, 'a second paper kite').textContent()).toBe('Queued');
    await expect(held.getByRole('button', { name: 'Raise the cap' })).toBeVisible();
    await screenshot(page, 'budget-held');

    await held.getByRole('button', { name: 'Submit once anyway' }).click();
    await expect.poll(() => state(page, 'a second paper kite').textContent(), RUN).toBe('Done');
    await expect(job(page, 'a second paper kite').getByRole('status', { name: 'Held' })).toHaveCount(0);

    // Raising the cap lets a held job start by itself.
    await composeImage(page, 'a third paper kite');
    await nav(page, 'Queue');
    await expect(job(page, 'a third paper kite').getByRole('status', { name: 'Held' })).toContainText(
      "Over today's budget",
      POLL,
    );
    await job(page, 'a third paper kite').getByRole('button', { name: 'Raise the cap' }).click();
    await page.getByLabel('Daily cap (USD)').fill('1');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await nav(page, 'Queue');
    await expect.poll(() => state(page, 'a third paper kite').textContent(), RUN).toBe('Done');

    // Settings → Usage: the total is the sum of the finished jobs; nothing is charged but undelivered.
    let sum = 0;
    for (const prompt of ['a paper kite', 'a second paper kite', 'a third paper kite'])
      sum += await shownPrice(page, prompt);
    await nav(page, 'Settings');
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await expect(page.getByLabel('Total cost')).toHaveText(formatPrice(sum), POLL);
    await expect(page.getByRole('region', { name: 'Charged but not delivered' })).toHaveCount(0);
    await page
      .getByRole('region', { name: /Tier, limits and usage/ })
      .scrollIntoViewIfNeeded()
      .catch(() => undefined);
    await screenshot(page, 'budget-settings-usage');
    expectNoPageErrors(pageErrors);
  });

  test('a charged job whose download failed is listed in Settings → Usage, and Recover saves it', async ({
    page,
    app,
    pageErrors,
  }) => {
    // Browser mode with --data keeps downloads in <data>/downloads: made a file, no download can land.
    const downloads = join(app.dataDir, 'downloads');
    rmSync(downloads, { recursive: true, force: true });
    writeFileSync(downloads, 'not a folder');
    await composeImage(page, 'a kite in the rain');
    await nav(page, 'Queue');
    await expect.poll(() => state(page, 'a kite in the rain').textContent(), RUN).toBe('Failed');
    const price = await shownPrice(page, 'a kite in the rain');

    rmSync(downloads, { force: true });
    mkdirSync(downloads);
    await nav(page, 'Settings');
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    const gap = page.getByRole('region', { name: 'Charged but not delivered' });
    await expect(gap).toContainText(formatPrice(price), POLL);
    await expect(gap).toContainText('a kite in the rain');
    await expect(page.getByLabel('Total cost')).toHaveText('Free');
    await screenshot(page, 'usage-charged-not-delivered');

    await gap.getByRole('button', { name: 'Recover a kite in the rain' }).click();
    await expect(gap).toHaveCount(0, RUN);
    await expect(page.getByLabel('Total cost')).toHaveText(formatPrice(price));
    await nav(page, 'Queue');
    await expect.poll(() => state(page, 'a kite in the rain').textContent(), POLL).toBe('Done');
    expectNoPageErrors(pageErrors);
  });
});
