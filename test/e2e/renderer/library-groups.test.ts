// The Library's groups (docs/workflows.md, "The Library") on the real app in browser mode: takes by
// session and prompt under headers that say the prompt, the day, the count and the price;
// variations of one source as one stack tile with its count, which opens in place; a double click
// puts a take on the stage.
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, nav } from './support/pages.ts';
import { seedTakes, type SeedTake } from './support/seed.ts';

const FOX = 'a red fox running through fresh snow at dawn, low tracking shot';
const LAKE = 'a paper lantern over a dark lake';
const CITY = 'rain on a neon city street';

const TAKES: SeedTake[] = [
  { prompt: FOX, minutesAgo: 30, price: 0.1 },
  { prompt: FOX, minutesAgo: 20, variationOf: 0, price: 0.1 },
  { prompt: FOX, minutesAgo: 20, variationOf: 0, price: 0.1 },
  { prompt: FOX, minutesAgo: 25, price: 0.1 },
  { prompt: LAKE, minutesAgo: 5, price: 0.05 },
  // The day before: a session of its own.
  { prompt: CITY, minutesAgo: 26 * 60, price: 0.2 },
  { prompt: CITY, minutesAgo: 26 * 60 + 10, price: 0.2 },
];

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}`));
}

test.describe('the Library’s groups', () => {
  test.use({ appOptions: { prepare: (dir) => seedTakes(dir, TAKES).then(() => undefined) } });

  test('groups by session and prompt, and variations are one stack with a count that opens in place', async ({
    page,
    pageErrors,
  }) => {
    await nav(page, 'Library');
    const grid = page.getByTestId('library-grid');
    await page.getByText('7 items').waitFor();

    // Two sessions: today's four fox takes and a lantern, yesterday's two city takes.
    const sessions = grid.getByTestId('library-session');
    await expect(sessions).toHaveCount(2);
    await expect(sessions.nth(0)).toContainText('Today');
    await expect(sessions.nth(0)).toContainText('5 takes · $0.450');
    await expect(sessions.nth(1)).toContainText('2 takes · $0.400');

    // The fox prompt's group: its header has the prompt (in full on hover), the day, count and price.
    const fox = grid.getByTestId('library-group').filter({ hasText: 'a red fox' });
    await expect(fox).toHaveAttribute('title', FOX);
    await expect(fox).toContainText('Today · 4 takes · $0.400');
    await expect(grid.getByTestId('library-group').filter({ hasText: CITY })).toContainText('2 takes · $0.400');

    // The source and its two variations: one tile, "3 takes", closed.
    const stack = grid.getByRole('option', { name: /stack of 3 takes, closed$/ });
    await expect(stack).toHaveCount(1);
    await expect(stack.getByTestId('stack-toggle')).toHaveText('▸ 3 takes');
    await expect(grid.getByRole('option', { name: new RegExp(FOX) })).toHaveCount(2);
    await expect(grid.getByRole('option', { name: /variation$/ })).toHaveCount(0);

    // Opened in place: the variations follow their source, in the same group.
    await stack.getByTestId('stack-toggle').click();
    const open = grid.getByRole('option', { name: /stack of 3 takes, open$/ });
    await expect(open).toBeVisible();
    await expect(grid.getByRole('option', { name: /variation$/ })).toHaveCount(2);
    await expect(grid.getByRole('option', { name: new RegExp(FOX) })).toHaveCount(4);
    const sourceBox = (await open.boundingBox())!;
    const firstVariation = (await grid
      .getByRole('option', { name: /variation$/ })
      .first()
      .boundingBox())!;
    expect(firstVariation.y).toBeCloseTo(sourceBox.y, 0);
    expect(firstVariation.x).toBeGreaterThan(sourceBox.x);

    // Both themes, with headers, an open stack and its variations on screen.
    const found: Record<string, string[]> = {};
    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
      const violations = await seriousViolations(page);
      if (violations.length > 0) found[scheme] = violations;
      await screenshot(page, `library-groups-${scheme}`);
    }
    expect(found).toEqual({});

    // The keyboard's way: the cover's detail closes (and opens) the stack.
    await open.click();
    const toggle = page.getByRole('complementary', { name: 'Item details' }).getByRole('button', {
      name: 'Hide 2 variations',
    });
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await toggle.press('Enter');
    await expect(grid.getByRole('option', { name: /variation$/ })).toHaveCount(0);
    await expect(grid.getByRole('option', { name: /stack of 3 takes, closed$/ })).toBeVisible();

    // Opening a take puts it on the canvas's stage.
    await grid.getByRole('option', { name: new RegExp(LAKE) }).dblclick();
    await expect(page.getByRole('heading', { name: 'Compose', level: 1 })).toBeVisible();
    await expect(page.getByRole('region', { name: 'Stage' }).getByLabel(`Take on stage: ${LAKE}`)).toBeVisible();
    expectNoPageErrors(pageErrors);
  });
});
