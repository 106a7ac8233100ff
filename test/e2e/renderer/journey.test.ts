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
  waitForJobsToFinish,
} from './support/pages.ts';

// A creator's journey against the real app in browser mode: the Local engine renders with ffmpeg.
test.describe('a creator’s journey', () => {
  test('prompt → model → Generate → Queue → Library with a thumbnail → plays → download → GIF export', async ({
    page,
    pageErrors,
  }) => {
    await compose(page, {
      prompt: 'A neon fox running through a rainy city at night',
      model: /^Motion/,
      shortest: true,
    });
    await expect.poll(() => page.getByLabel('Estimated price').textContent()).toMatch(/\$/);
    await screenshot(page, 'compose');
    await generateButton(page).click();
    await page.getByRole('status').filter({ hasText: 'Job queued' }).waitFor();

    await nav(page, 'Queue');
    await jobs(page).first().waitFor();
    await screenshot(page, 'queue-running');
    const states = await waitForJobsToFinish(page, 1, RENDER_TIMEOUT_MS);
    expect(states).toEqual(['Done']);
    await screenshot(page, 'queue-done');

    await nav(page, 'Library');
    const tile = page.getByRole('option', { name: /A neon fox running/ });
    await tile.waitFor({ timeout: 30_000 });
    const thumb = tile.locator('img');
    await expect.poll(() => imageLoaded(thumb), { timeout: 15_000 }).toBe(true);
    await tile.click();

    const details = page.getByRole('complementary', { name: 'Item details' });
    const player = details.getByLabel('Player');
    await player.evaluate((v: HTMLVideoElement) => {
      v.muted = true;
      return v.play();
    });
    await expect
      .poll(() => player.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 15_000 })
      .toBeGreaterThan(0.2);
    await screenshot(page, 'library-detail');

    await details.getByRole('button', { name: 'Download' }).click();
    await details.getByText('On disk').waitFor({ timeout: 60_000 });

    await details.getByLabel('Export format').selectOption('gif');
    await details.getByRole('button', { name: 'Export', exact: true }).click();
    const result = details.getByRole('status', { name: 'Export result' });
    await result.waitFor({ timeout: 90_000 });
    expect(await result.textContent()).toContain('image/gif');
    await screenshot(page, 'library-exported');

    await nav(page, 'Settings');
    await page.getByRole('heading', { name: 'Tier, limits and usage' }).waitFor();
    await page.getByRole('meter', { name: 'Requests this minute' }).waitFor();
    await screenshot(page, 'settings');
    expectNoPageErrors(pageErrors);
  });
});
