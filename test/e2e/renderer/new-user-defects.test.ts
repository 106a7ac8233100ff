import type { Locator } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { compose, expectNoPageErrors, jobs, nav, RENDER_TIMEOUT_MS, waitForJobsToFinish } from './support/pages.ts';

/** Whether two elements' boxes overlap on screen. */
async function overlap(a: Locator, b: Locator): Promise<boolean> {
  const [p, q] = [await a.boundingBox(), await b.boundingBox()];
  if (!p || !q) throw new Error('an element has no box');
  return p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height;
}

// The defects a new user met (docs/workflows.md), on the real app in browser mode (Local engine, ffmpeg).
test.describe('defects a new user met', () => {
  test('seeds, Open in Library, one retention text, names, sizes, Download again, toasts, filters, the Local profile', async ({
    page,
    pageErrors,
  }) => {
    // Compose: the form has a seed; ×2 variations take consecutive seeds from it.
    await compose(page, { prompt: 'A paper boat drifting down a gutter stream', model: /^Motion/, shortest: true });
    await page.getByLabel('Seed', { exact: true }).fill('4242');
    await page.getByRole('spinbutton', { name: 'Variations' }).fill('2');
    await page.getByText('×2 uses seeds 4242–4243').waitFor();
    await page.getByRole('button', { name: 'Generate ×2' }).click();

    // The toast neither covers the Generate bar nor any of the screen: it sits in the sidebar.
    const toast = page.getByRole('status').filter({ hasText: '2 jobs queued' });
    await toast.waitFor();
    expect(await overlap(toast, page.getByRole('group', { name: 'Generate' }))).toBe(false);
    expect(await overlap(toast, page.getByRole('main'))).toBe(false);
    await screenshot(page, 'defects-compose-seed-toast');
    // A success fades by itself.
    await expect(toast).toBeHidden({ timeout: 30_000 });

    // Queue: each variation says its seed, and the model under the catalog's name.
    await nav(page, 'Queue');
    await expect
      .poll(() => page.getByTestId('job-seed').allTextContents())
      .toEqual(expect.arrayContaining(['seed 4242', 'seed 4243']));
    await expect(jobs(page).first()).toContainText('Motion (procedural, ffmpeg)');
    expect(await waitForJobsToFinish(page, 2, RENDER_TIMEOUT_MS)).toEqual(['Done', 'Done']);
    await screenshot(page, 'defects-queue-seeds');

    // "Open in Library" opens that clip's detail.
    await jobs(page).first().getByRole('button', { name: 'Open in Library' }).click();
    const details = page.getByRole('complementary', { name: 'Item details' });
    await details.waitFor({ timeout: 30_000 });
    await expect(details).toContainText('A paper boat drifting down a gutter stream');

    // Retention: one true sentence, the tile's badge agrees, and Keep only where it changes anything.
    const notice = details.getByTestId('retention-notice');
    const text = (await notice.textContent()) ?? '';
    expect(text).not.toContain('Download or keep');
    const openTile = page.locator('.tile.open');
    await openTile.waitFor({ timeout: 30_000 });
    const badge = (await openTile.getByTestId('retention').textContent()) ?? '';
    if (text.startsWith('Downloaded')) {
      expect(badge).toBe('Downloaded');
      expect(await details.getByRole('button', { name: 'Keep' }).count()).toBe(0);
    } else {
      expect(text).toMatch(/^Deleted by the service (today|on .+) unless kept\.$/);
      expect(badge).toMatch(/^Deleted (today|tomorrow|in \d+ days)$/);
      await details.getByRole('button', { name: 'Keep' }).waitFor();
    }

    // One spelling for the model and the provider; the clip's own size, its WebM apart.
    const meta = details.locator('dl.meta');
    await expect(meta).toContainText('Motion (procedural, ffmpeg)');
    await expect(meta).not.toContainText('clipdesk/motion');
    await expect(meta).toContainText(/Local \w+ \(procedural\)/);
    await expect(meta).not.toContainText(/local-(swift|studio|prism)/);
    await expect(meta).toContainText(/\d+(\.\d)? (KB|MB) \(MP4\)/);
    await expect(meta).toContainText(/WEBM \d+(\.\d)? (KB|MB)/);
    await expect(openTile.locator('.tile-sub')).toHaveText(
      /^Motion \(procedural, ffmpeg\) · Local \w+ \(procedural\)$/,
    );
    await screenshot(page, 'defects-library-open-in-library');

    // "Download again" downloads and says where the file went.
    const download = details.getByRole('button', { name: /^Download/ });
    if ((await download.textContent()) === 'Download') {
      await download.click();
      await details.getByText('On disk').waitFor({ timeout: 60_000 });
    }
    await details.getByRole('button', { name: 'Download again' }).click();
    const again = page.getByRole('status').filter({ hasText: 'Downloaded again' });
    await again.waitFor({ timeout: 60_000 });
    await expect(again).toContainText('.mp4');
    expect(await overlap(again, page.getByRole('main'))).toBe(false);
    await expect(notice).toHaveText('Downloaded, so it is kept: the service does not delete it.');
    await expect(openTile.getByTestId('retention')).toHaveText('Downloaded');
    await screenshot(page, 'defects-library-download-again');

    // A filter that matches nothing says so, and clears.
    await page.getByRole('button', { name: 'Close details' }).click();
    await page.getByLabel('Search prompts').fill('no clip is called this');
    await page.getByRole('heading', { name: 'No item matches the filters' }).waitFor({ timeout: 15_000 });
    expect(await page.getByText('Nothing here yet').count()).toBe(0);
    await screenshot(page, 'defects-library-no-match');
    await page.getByRole('button', { name: 'Clear filters', exact: true }).click();
    await page.getByText(/^2 items$/).waitFor({ timeout: 15_000 });

    // The Local engine profile: no key box, no keychain message.
    await nav(page, 'Settings');
    const local = page.getByRole('group', { name: 'Profile Local engine' });
    await local.waitFor();
    await expect(local).toContainText('No API key needed');
    expect(await local.getByRole('textbox').count()).toBe(0);
    await expect(local).not.toContainText(/keychain|D-Bus|Secret Service/i);
    await screenshot(page, 'defects-settings-local-profile');
    expectNoPageErrors(pageErrors);
  });
});
