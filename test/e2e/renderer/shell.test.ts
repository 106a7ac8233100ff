import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import {
  compose,
  expectNoPageErrors,
  generateButton,
  imageLoaded,
  jobs,
  nav,
  RENDER_TIMEOUT_MS,
} from './support/pages.ts';
import { seedLibrary } from './support/seed.ts';

const SCREENS = ['Compose', 'Queue', 'Library', 'Settings'] as const;
type ScreenName = (typeof SCREENS)[number];

/** What each screen shows once it has loaded, so axe sees the screen and not its skeleton. */
async function openScreen(page: Page, name: ScreenName): Promise<void> {
  await nav(page, name);
  const ready: Record<ScreenName, () => Promise<void>> = {
    Compose: () => page.getByLabel('Prompt', { exact: true }).waitFor(),
    Queue: () => page.getByRole('button', { name: 'Pause queue' }).waitFor(),
    Library: () => page.getByTestId('library-grid').getByRole('option').first().waitFor(),
    Settings: () => page.getByRole('radiogroup', { name: 'Theme' }).waitFor(),
  };
  await ready[name]();
}

/** axe's serious and critical findings against WCAG 2.1 A and AA, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary ?? ''}`));
}

test.describe('the shell', () => {
  test.use({ appOptions: { prepare: (dir) => seedLibrary(dir, 40) } });

  test('the top bar is on every screen, and every screen passes axe in both themes', async ({ page, pageErrors }) => {
    const found: Record<string, string[]> = {};
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
      for (const name of SCREENS) {
        await openScreen(page, name);
        await expect(page.getByTestId('spend-meter')).toHaveText(/^Today \$/);
        await expect(page.getByRole('button', { name: /^Jobs: / })).toBeVisible();
        const violations = await seriousViolations(page);
        if (violations.length > 0) found[`${name} (${scheme})`] = violations;
        await screenshot(page, `shell-${name.toLowerCase()}-${scheme}`);
      }
    }
    // Every screen and theme, all at once: one run names everything to fix.
    expect(found).toEqual({});
    expectNoPageErrors(pageErrors);
  });

  test('at 800 px the sidebar keeps its icons and names, and each screen keeps its own scroll', async ({
    page,
    pageErrors,
  }) => {
    await page.setViewportSize({ width: 800, height: 700 });
    const sidebar = page.getByRole('navigation', { name: 'Main' });
    expect((await sidebar.boundingBox())!.width).toBeLessThanOrEqual(64);
    for (const name of SCREENS)
      await expect(sidebar.getByRole('button', { name: new RegExp(`^${name}`) })).toBeVisible();
    await page.keyboard.press('Control+3');
    await page.getByTestId('library-grid').getByRole('option').first().waitFor();
    await screenshot(page, 'shell-library-800');

    // Settings scrolled down; Queue opens at its own top; Settings comes back where it was left.
    const main = page.getByRole('main', { name: 'Clipdesk' });
    await openScreen(page, 'Settings');
    await main.evaluate((el) => (el.scrollTop = 400));
    await expect.poll(() => main.evaluate((el) => el.scrollTop)).toBe(400);
    await openScreen(page, 'Queue');
    await expect.poll(() => main.evaluate((el) => el.scrollTop)).toBe(0);
    await openScreen(page, 'Settings');
    await expect.poll(() => main.evaluate((el) => el.scrollTop)).toBe(400);
    expectNoPageErrors(pageErrors);
  });

  test('a finished take shows in the queue and the jobs popover with a real play button, and its tile a price', async ({
    page,
    pageErrors,
  }) => {
    await compose(page, { prompt: 'a paper lantern over a dark river', model: /^Motion/, shortest: true });
    await generateButton(page).click();
    await nav(page, 'Queue');
    const row = jobs(page).filter({ hasText: 'a paper lantern over a dark river' });
    const play = row.getByRole('button', { name: 'Play a paper lantern over a dark river' });
    await play.waitFor({ timeout: RENDER_TIMEOUT_MS });
    await expect.poll(() => imageLoaded(row.locator('.job-thumb img'))).toBe(true);
    await play.click();
    await expect(row.getByRole('button', { name: 'Stop a paper lantern over a dark river' })).toHaveAttribute(
      'aria-pressed',
      'true',
    );
    await expect(page.getByTestId('spend-meter')).toHaveText(/^Today \$0\.\d+/);

    await page.getByRole('button', { name: /^Jobs: / }).click();
    const popover = page.getByRole('dialog', { name: 'Recent jobs' });
    await expect(popover.getByRole('button', { name: 'Play a paper lantern over a dark river' })).toBeVisible();
    await screenshot(page, 'shell-jobs-popover');
    await page.keyboard.press('Escape');
    await expect(popover).toBeHidden();

    await nav(page, 'Library');
    const tile = page.getByRole('option', { name: /a paper lantern over a dark river/ });
    await expect(tile.getByTestId('tile-price')).toHaveText(/^\$0\.\d+/);
    await tile.hover();
    await expect(tile.getByTestId('hover-play')).toBeAttached();
    await screenshot(page, 'shell-library-take');
    expectNoPageErrors(pageErrors);
  });
});
