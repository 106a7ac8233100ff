import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, nav } from './support/pages.ts';
import { seedLibrary, seedPrompt } from './support/seed.ts';

const ITEMS = 10_000;
const GRID_NODE_BUDGET = 400;

const gridNodes = (page: Page) => page.getByTestId('library-grid').evaluate((el) => el.querySelectorAll('*').length);

test.describe('a library of 10,000 items', () => {
  test.use({ appOptions: { prepare: (dir) => seedLibrary(dir, ITEMS) } });

  test('scrolls to the end, filters and searches, and the DOM stays bounded', async ({ page, pageErrors }) => {
    await nav(page, 'Library');
    await page.getByText('10,000 items').waitFor({ timeout: 30_000 });
    const grid = page.getByTestId('library-grid');
    await page.getByRole('option', { name: new RegExp(`${seedPrompt(ITEMS - 1)}$`) }).waitFor();
    expect(await gridNodes(page)).toBeLessThanOrEqual(GRID_NODE_BUDGET);
    await screenshot(page, 'library-10k-top');

    // Scroll through everything: pages load as the grid asks, the DOM does not grow.
    // One round trip per step (scroll, then count what the last step rendered): the page's time,
    // not the test's, is what this measures.
    let maxNodes = 0;
    for (let step = 0; step < 400; step++) {
      const { done, nodes } = await grid.evaluate((el) => {
        const counted = el.querySelectorAll('*').length;
        el.scrollTop += el.clientHeight * 5;
        return { done: el.scrollTop + el.clientHeight >= el.scrollHeight - 2, nodes: counted };
      });
      maxNodes = Math.max(maxNodes, nodes);
      if (done) break;
    }
    maxNodes = Math.max(maxNodes, await gridNodes(page));
    const oldest = page.getByRole('option', { name: new RegExp(`${seedPrompt(0)}$`) });
    await oldest.waitFor({ timeout: 30_000 });
    expect(maxNodes).toBeLessThanOrEqual(GRID_NODE_BUDGET);
    await screenshot(page, 'library-10k-bottom');

    // Keyboard: Home goes back to the newest item.
    await oldest.click();
    await page.keyboard.press('Home');
    await page.getByRole('option', { name: new RegExp(`${seedPrompt(ITEMS - 1)}$`) }).waitFor();

    await page.getByLabel('Kind').selectOption('image');
    await page.getByText('2,000 items').waitFor({ timeout: 15_000 });
    expect(await gridNodes(page)).toBeLessThanOrEqual(GRID_NODE_BUDGET);

    await page.getByLabel('Kind').selectOption('');
    await page.getByRole('searchbox', { name: 'Search prompts' }).fill('number 4242');
    await page.getByText(/^1 item$/).waitFor({ timeout: 15_000 });
    await page.getByRole('option', { name: /number 4242$/ }).waitFor();
    await screenshot(page, 'library-10k-search');
    expectNoPageErrors(pageErrors);
  });
});
