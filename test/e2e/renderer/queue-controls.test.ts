import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, generateButton, nav, pickModel } from './support/pages.ts';

/** IPC round trips and job events take a moment on a loaded 2-core machine. */
const POLL = { timeout: 15_000 };
const job = (page: Page, prompt: string) => page.getByRole('listitem', { name: `Job: ${prompt}` });
const state = (page: Page, prompt: string) => job(page, prompt).getByTestId('job-state');

test.describe('queue controls', () => {
  test('pause holds new jobs; reorder, cancel and resume; a canceled job retries to done', async ({
    page,
    pageErrors,
  }) => {
    await nav(page, 'Queue');
    await page.getByRole('button', { name: 'Pause queue' }).click();
    await page.getByText('Paused', { exact: true }).waitFor();

    await nav(page, 'Compose');
    await page.getByRole('radio', { name: 'Image' }).click();
    await pickModel(page, /Still/);
    for (const prompt of ['first lantern', 'second lantern', 'third lantern']) {
      await page.getByLabel('Prompt', { exact: true }).fill(prompt);
      await generateButton(page).click();
      await page.getByText('Job queued').last().waitFor();
    }

    await nav(page, 'Queue');
    const waiting = page.getByRole('region', { name: 'Waiting' });
    await expect.poll(() => waiting.getByRole('listitem').count(), POLL).toBe(3);
    // Move the third job to the front.
    await job(page, 'third lantern').getByRole('button', { name: 'Move up' }).click();
    await expect.poll(() => job(page, 'third lantern').getByLabel('Position 2 in the queue').count(), POLL).toBe(1);
    await job(page, 'third lantern').getByRole('button', { name: 'Move up' }).click();
    await expect.poll(() => job(page, 'third lantern').getByLabel('Position 1 in the queue').count(), POLL).toBe(1);
    await expect.poll(() => job(page, 'first lantern').getByLabel('Position 2 in the queue').count(), POLL).toBe(1);

    await job(page, 'second lantern').getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => state(page, 'second lantern').textContent(), POLL).toBe('Canceled');
    await screenshot(page, 'queue-paused-reordered');

    // Nothing ran while paused.
    expect(await state(page, 'first lantern').textContent()).not.toBe('Done');
    await page.getByRole('button', { name: 'Resume queue' }).click();
    await expect.poll(() => state(page, 'third lantern').textContent(), { timeout: 60_000 }).toBe('Done');
    await expect.poll(() => state(page, 'first lantern').textContent(), { timeout: 60_000 }).toBe('Done');
    expect(await state(page, 'second lantern').textContent()).toBe('Canceled');

    await job(page, 'second lantern').getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => state(page, 'second lantern').textContent(), { timeout: 60_000 }).toBe('Done');
    await screenshot(page, 'queue-controls-done');
    expectNoPageErrors(pageErrors);
  });
});
