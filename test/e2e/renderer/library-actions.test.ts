import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, nav } from './support/pages.ts';
import { seedLibrary, seedPrompt, seedPublicMedia } from './support/seed.ts';

const ITEMS = 20;
const tile = (page: Page, i: number) => page.getByRole('option', { name: new RegExp(`${seedPrompt(i)}$`) });

test.describe('library actions', () => {
  test.use({
    appOptions: {
      prepare: async (dir) => {
        await seedLibrary(dir, ITEMS);
        await seedPublicMedia(dir, 'someone-else', ['a public lighthouse at dawn', 'a public comet over hills']);
      },
    },
  });

  test('multi-select and bulk favourite, the public feed of other users, and regenerate with the same settings', async ({
    page,
    pageErrors,
  }) => {
    await nav(page, 'Library');
    await page.getByText(`${ITEMS} items`).waitFor({ timeout: 30_000 });

    // Click one, Ctrl-click another: a bulk bar for two, and favourite both at once.
    await tile(page, 19).click();
    await page.getByRole('button', { name: 'Close details' }).click();
    await tile(page, 18).click({ modifiers: ['Control'] });
    const bulk = page.getByRole('toolbar', { name: 'Bulk actions' });
    await bulk.getByText('2 selected').waitFor();
    await bulk.getByRole('button', { name: 'Favourite 2' }).click();
    await page.getByRole('button', { name: '★ Favourites' }).click();
    await page.getByText(/^2 items$/).waitFor({ timeout: 15_000 });
    await tile(page, 19).waitFor();
    await tile(page, 18).waitFor();
    await screenshot(page, 'library-favourites');
    await page.getByRole('button', { name: '★ Favourites' }).click();
    await page.getByText(`${ITEMS} items`).waitFor({ timeout: 15_000 });

    // The public feed shows other users' public media, not our own private items.
    await page.getByRole('switch', { name: 'Public feed' }).check();
    await page.getByRole('option', { name: /a public lighthouse at dawn$/ }).waitFor({ timeout: 15_000 });
    await page.getByRole('option', { name: /a public comet over hills$/ }).waitFor();
    expect(await tile(page, 19).count()).toBe(0);
    await screenshot(page, 'library-public-feed');
    await page.getByRole('switch', { name: 'Public feed' }).uncheck();

    // Regenerate: back in Compose with the item's prompt and model.
    await tile(page, 16).click();
    await page.getByRole('complementary', { name: 'Item details' }).getByRole('button', { name: 'Regenerate' }).click();
    await expect.poll(() => page.getByLabel('Prompt', { exact: true }).inputValue()).toBe(seedPrompt(16));
    await screenshot(page, 'compose-regenerate');
    expectNoPageErrors(pageErrors);
  });
});
