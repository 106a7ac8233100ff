// The canvas loop (docs/workflows.md, "The canvas") on the real app in browser mode, from a fresh
// data folder, with the Local engine rendering through ffmpeg: a prompt and one click on Generate
// play the take on the stage of the same screen; Variations says its price and stacks its takes in
// the filmstrip; Re-roll and Extend take one click each; two takes play side by side.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { expectNoPageErrors, generateButton, nav, RENDER_TIMEOUT_MS } from './support/pages.ts';
import { seedLibrary } from './support/seed.ts';

const PROMPT = 'A paper lantern drifting over a night lake';

/** Whether a video element is playing: time moves on. */
async function isPlaying(video: Locator): Promise<boolean> {
  const t0 = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
  await video.page().waitForTimeout(300);
  const t1 = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
  return t1 !== t0 && !(await video.evaluate((v: HTMLVideoElement) => v.paused));
}

function stage(page: Page): Locator {
  return page.getByRole('region', { name: 'Stage' });
}

/** The keyboard, not clicks: the shortest duration and smallest size the model has, so renders are quick. */
async function shortestByKeyboard(page: Page): Promise<void> {
  // The preselected model's chips (the first video model the picker lists: Motion) once the models are in.
  const size = page.getByLabel('Size', { exact: true });
  await expect(size).toBeVisible();
  await size.selectOption('360p');
  const duration = page.getByRole('slider', { name: 'Duration' });
  await duration.focus();
  await duration.press('Home');
}

test.describe('the canvas', () => {
  test('Generate plays on the stage; Variations, Re-roll, Extend and side by side without a screen change', async ({
    page,
    pageErrors,
  }) => {
    test.setTimeout(5 * RENDER_TIMEOUT_MS);
    const heading = page.getByRole('heading', { name: 'Compose', level: 1 });
    await expect(heading).toBeVisible();
    await page.getByLabel('Prompt', { exact: true }).fill(PROMPT);
    await shortestByKeyboard(page);
    await expect(generateButton(page)).toBeEnabled();
    // Generate says its price before it is pressed.
    await expect(generateButton(page)).toContainText(/Generate · \$\d/);

    // The only click: the take renders and then plays on the stage of this same screen.
    await generateButton(page).click();
    await expect(stage(page).getByRole('status', { name: 'Progress' })).toBeVisible();
    const onStage = stage(page).getByLabel(`Take on stage: ${PROMPT}`);
    await expect(onStage).toBeVisible({ timeout: RENDER_TIMEOUT_MS });
    await expect.poll(() => isPlaying(onStage), { timeout: 15_000 }).toBe(true);
    expect(await onStage.evaluate((v: HTMLVideoElement) => v.muted && v.loop)).toBe(true);

    // Variations: the price is on the button before it is pressed; one click makes them, and they
    // stack under their source in the filmstrip, on the same screen.
    const variations = stage(page).getByRole('button', { name: /^Make Variations ×2 · \$\d+\.\d+$/ });
    await expect(variations).toBeVisible();
    await variations.click();
    const stack = page.getByRole('list', { name: `Takes of ${PROMPT}` });
    await expect(stack.getByRole('listitem')).toHaveCount(3, { timeout: RENDER_TIMEOUT_MS });
    await expect(stack.getByText('Variation', { exact: true })).toHaveCount(2);
    await expect(heading).toBeVisible();
    // Both variations finish as takes that can be put on the stage.
    await expect
      .poll(() => stack.locator('.film-thumb img, .film-thumb video').count(), { timeout: 2 * RENDER_TIMEOUT_MS })
      .toBe(3);

    // Re-roll: one click, a new take (the same settings, a new seed) goes on the stage.
    await stage(page)
      .getByRole('button', { name: /^Re-roll/ })
      .click();
    const columns = page.getByRole('region', { name: 'Session takes' }).locator('.film-column');
    await expect(columns).toHaveCount(2);
    await expect(stage(page).getByRole('status', { name: 'Progress' })).toBeVisible();
    await expect(onStage).toBeVisible({ timeout: RENDER_TIMEOUT_MS });
    await expect.poll(() => isPlaying(onStage), { timeout: 15_000 }).toBe(true);

    // Extend: one click puts the take's last frame in the start-frame slot and focuses the prompt.
    await stage(page).getByRole('button', { name: 'Extend' }).click();
    await expect(page.getByRole('img', { name: /^Start frame preview: Last frame of/ })).toBeVisible();
    await expect(page.getByLabel('Prompt', { exact: true })).toBeFocused();
    await screenshot(page, 'canvas');
    const shot = await screenshot(page, 'canvas-readme');
    // The README's picture is refreshed only when asked (docs/testing.md): a test run leaves the
    // tree as it found it.
    if (process.env['CLIPDESK_UPDATE_DOC_IMAGES'] === '1') {
      await mkdir(join(process.cwd(), 'docs', 'images'), { recursive: true });
      await copyFile(shot, join(process.cwd(), 'docs', 'images', 'compose.png'));
    }

    // Two takes side by side, in step.
    const picks = page.getByRole('checkbox', { name: /^Compare / });
    await picks.nth(0).check();
    await picks.nth(1).check();
    await page.getByRole('button', { name: 'Play side by side' }).click();
    const sideBySide = stage(page).getByRole('group', { name: 'Side by side' });
    const players = sideBySide.getByLabel(/^Compared take:/);
    await expect(players).toHaveCount(2);
    await expect.poll(() => isPlaying(players.nth(0)), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => isPlaying(players.nth(1)), { timeout: 15_000 }).toBe(true);
    await screenshot(page, 'canvas-side-by-side');
    await expect(heading).toBeVisible();

    // A 1024 × 768 window: the stage gives way, Generate stays in view without scrolling.
    await page.getByRole('button', { name: 'Back to one take' }).click();
    await page.setViewportSize({ width: 1024, height: 768 });
    await expect(generateButton(page)).toBeInViewport();
    await expect(stage(page).getByLabel(/^Take on stage:/)).toBeInViewport();
    await screenshot(page, 'canvas-1024');
    expectNoPageErrors(pageErrors);
  });
});

/** The box of an element, which must lie wholly inside the window (nothing cut off, nothing below the fold). */
async function expectInsideWindow(page: Page, target: Locator, name: string): Promise<Box> {
  await expect(target, name).toBeVisible();
  const box = await target.boundingBox();
  const view = page.viewportSize()!;
  expect(box, name).not.toBeNull();
  const b = box!;
  expect(
    b.x >= 0 && b.y >= 0 && b.x + b.width <= view.width + 0.5 && b.y + b.height <= view.height + 0.5,
    `${name} at ${JSON.stringify(b)} lies outside the ${view.width}×${view.height} window`,
  ).toBe(true);
  return b;
}

type Box = { x: number; y: number; width: number; height: number };

function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

// Small windows (docs/workflows.md, "Windows"): the take keeps a real share of the height, and
// Generate, the prompt and every action on the take are on screen without scrolling. A seeded
// library's take is put on the stage, so no render is needed.
test.describe('the canvas in small windows', () => {
  test.use({ appOptions: { prepare: (dir) => seedLibrary(dir, 3) } });

  const windows = [
    { width: 800, height: 600, stageShare: 0.33 },
    { width: 1024, height: 700, stageShare: 0.4 },
  ];

  test('at 800 × 600 and 1024 × 700 the stage keeps its share and every control is in the window', async ({ page }) => {
    await nav(page, 'Library');
    await page.getByTestId('library-grid').getByRole('option').nth(1).click();
    await page.getByRole('button', { name: 'Show on stage' }).click();
    await expect(stage(page).getByLabel(/^Take on stage:/)).toBeVisible();
    await page.getByLabel('Prompt', { exact: true }).fill(PROMPT);
    await expect(generateButton(page)).toBeEnabled();
    // A notice on screen, as after any action: it must not cover the dock's controls.
    await stage(page).getByRole('button', { name: 'Favourite' }).click();
    await page.getByRole('toolbar', { name: 'Take actions' }).getByRole('button', { name: 'Download' }).click();
    const notice = page.getByRole('region', { name: 'Notifications' }).locator('.toast').last();
    await expect(notice).toBeVisible();

    for (const view of windows) {
      await page.setViewportSize({ width: view.width, height: view.height });
      const where = `${view.width}×${view.height}`;
      const dockControls = [
        await expectInsideWindow(page, generateButton(page), `Generate at ${where}`),
        await expectInsideWindow(page, page.getByLabel('Prompt', { exact: true }), `the prompt at ${where}`),
        await expectInsideWindow(page, page.getByRole('button', { name: /^Model:/ }), `the model chip at ${where}`),
      ];
      await expect(generateButton(page)).toContainText(/Generate · \$\d/);

      const screen = await expectInsideWindow(page, stage(page).locator('.stage-screen'), `the stage at ${where}`);
      expect(screen.height / view.height, `the stage is ${screen.height} px of ${view.height}`).toBeGreaterThanOrEqual(
        view.stageShare,
      );

      const row = page.getByRole('toolbar', { name: 'Take actions' });
      for (const name of [/^Re-roll · \$/, /^Make Variations ×2 · \$/, /^Extend$/, /^Favourite$/, /^More: /])
        await expectInsideWindow(page, row.getByRole('button', { name }), `${String(name)} at ${where}`);
      // Use as start frame and Download: in the row, or in ⋯ under the same names when the stage is narrow.
      for (const name of ['Use as start frame', 'Download']) {
        const inRow = row.getByRole('button', { name, exact: true });
        if (!(await inRow.isVisible())) {
          const more = row.getByRole('button', { name: /^More: / });
          if ((await more.getAttribute('aria-expanded')) !== 'true') await more.click();
        }
        await expectInsideWindow(page, row.getByRole('button', { name, exact: true }), `${name} at ${where}`);
      }
      await page.keyboard.press('Escape');

      const toast = await expectInsideWindow(page, notice, `the notice at ${where}`);
      for (const control of dockControls)
        expect(overlaps(toast, control), `the notice covers a dock control at ${where}`).toBe(false);
      await screenshot(page, `canvas-${view.width}x${view.height}`);
    }
  });
});
