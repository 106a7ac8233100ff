// The shot chain as a timeline on the canvas (docs/workflows.md, "The canvas"), on the real app in
// browser mode with the Local engine: a take and its Extend make a chain, which shows as a timeline
// right above the prompt dock; the keyboard reorders it (stored: the Library's badges follow); "+
// continue" fills the start-frame slot with the last shot's last frame; axe finds nothing serious.
import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, generateButton, nav, RENDER_TIMEOUT_MS } from './support/pages.ts';

const FIRST = 'A kite lifts off a windy beach';
const SECOND = 'The kite loops over the dunes';

const stage = (page: Page): Locator => page.getByRole('region', { name: 'Stage' });
const timeline = (page: Page): Locator => page.getByRole('region', { name: 'Shot chain timeline' });
const shots = (page: Page): Locator =>
  timeline(page)
    .getByRole('list', { name: 'Shots in order' })
    .getByRole('button', { name: /^Shot \d/ });

/** The shortest duration and smallest size the preselected model has, so renders are quick. */
async function shortest(page: Page): Promise<void> {
  await page.getByLabel('Size', { exact: true }).selectOption('360p');
  const duration = page.getByRole('slider', { name: 'Duration' });
  await duration.focus();
  await duration.press('Home');
}

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary ?? ''}`));
}

test.describe('the chain timeline', () => {
  test('a chain shows above the dock, reorders by keyboard, and "+ continue" fills the start frame', async ({
    page,
    pageErrors,
  }) => {
    test.setTimeout(3 * RENDER_TIMEOUT_MS);
    await page.getByLabel('Prompt', { exact: true }).fill(FIRST);
    await shortest(page);
    await generateButton(page).click();
    await expect(stage(page).getByLabel(`Take on stage: ${FIRST}`)).toBeVisible({ timeout: RENDER_TIMEOUT_MS });
    // One take is no chain yet.
    await expect(timeline(page)).toHaveCount(0);

    // Extend, a new prompt, Generate: the second shot continues the first.
    await stage(page).getByRole('button', { name: 'Extend' }).click();
    await expect(page.getByRole('img', { name: /^Start frame preview: Last frame of/ })).toBeVisible();
    await page.getByLabel('Prompt', { exact: true }).fill(SECOND);
    await generateButton(page).click();
    await expect(stage(page).getByLabel(`Take on stage: ${SECOND}`)).toBeVisible({ timeout: RENDER_TIMEOUT_MS });

    // The chain, as a timeline, right above the prompt dock.
    await expect(timeline(page)).toBeVisible({ timeout: 15_000 });
    await expect(shots(page)).toHaveCount(2);
    await expect(shots(page).nth(0)).toHaveAccessibleName(`Shot 1: ${FIRST}`);
    await expect(shots(page).nth(1)).toHaveAccessibleName(`Shot 2: ${SECOND}`);
    const dock = page.getByRole('region', { name: 'Prompt dock' });
    const [above, below] = [await timeline(page).boundingBox(), await dock.boundingBox()];
    expect(above!.y + above!.height).toBeLessThanOrEqual(below!.y);
    expect(await timeline(page).evaluate((el) => el.nextElementSibling?.getAttribute('aria-label'))).toBe(
      'Prompt dock',
    );
    await expect(timeline(page).getByRole('slider', { name: 'In point of shot 1' })).toBeVisible();

    // Alt+← on the focused second shot makes it the first; it keeps the keyboard.
    await shots(page).nth(1).focus();
    await page.keyboard.press('Alt+ArrowLeft');
    await expect(shots(page).nth(0)).toHaveAccessibleName(`Shot 1: ${SECOND}`);
    await expect(shots(page).nth(1)).toHaveAccessibleName(`Shot 2: ${FIRST}`);
    await expect(shots(page).nth(0)).toBeFocused();
    await screenshot(page, 'chain-timeline');

    for (const scheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `axe, ${scheme} theme`).toEqual([]);
    }

    // The order is stored: the Library's badges follow it.
    await nav(page, 'Library');
    const tile = (prompt: string) => page.getByRole('option', { name: new RegExp(`${prompt}$`) });
    await expect(tile(SECOND).getByText('Shot 1/2')).toBeVisible({ timeout: 15_000 });
    await expect(tile(FIRST).getByText('Shot 2/2')).toBeVisible();
    await nav(page, 'Compose');

    // "+ continue": the last shot's last frame in the start-frame slot, the prompt focused.
    await timeline(page).getByRole('button', { name: '+ continue' }).click();
    await expect(page.getByRole('img', { name: `Start frame preview: Last frame of “${FIRST}”` })).toBeVisible();
    await expect(page.getByLabel('Prompt', { exact: true })).toBeFocused();
    expectNoPageErrors(pageErrors);
  });
});
