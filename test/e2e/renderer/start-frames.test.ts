import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { dropStartFrame, testCardPng } from './support/frames.ts';
import {
  compose,
  expectNoPageErrors,
  generateButton,
  nav,
  RENDER_TIMEOUT_MS,
  waitForJobsToFinish,
} from './support/pages.ts';

test.describe('start frames', () => {
  test('a PNG dragged in becomes the start frame, and the image-to-video job succeeds', async ({
    app,
    page,
    pageErrors,
  }) => {
    const card = await testCardPng(app.dataDir);
    const uploads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rpc/uploads')) uploads.push(r.url());
    });
    await compose(page, { prompt: 'Slow push-in on the test card', model: /^Motion/, shortest: true });
    await dropStartFrame(page, { name: 'frame.png', type: 'image/png', base64: card.base64 });
    await page.getByRole('img', { name: 'Start frame preview: frame.png' }).waitFor();
    await page.getByText('640×360').waitFor();
    await screenshot(page, 'compose-start-frame');
    await generateButton(page).click();
    await nav(page, 'Queue');
    expect(await waitForJobsToFinish(page, 1, RENDER_TIMEOUT_MS)).toEqual(['Done']);
    expect(await page.getByRole('listitem').first().textContent()).toContain('start frame');
    expect(uploads.length).toBeGreaterThan(0);
    expectNoPageErrors(pageErrors);
  });

  test('a 21 MB image is refused with a clear message before any upload', async ({ page, pageErrors }) => {
    const uploads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/rpc/uploads')) uploads.push(r.url());
    });
    await compose(page, { prompt: 'Too big to start from', model: /^Motion/ });
    await dropStartFrame(page, { name: 'huge.png', type: 'image/png', size: 21_000_000 });
    const alert = page.getByRole('alert').filter({ hasText: 'huge.png' });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'huge.png is 21 MB; start frames can be at most 20 MB. Nothing was uploaded.',
    );
    expect(await generateButton(page).isDisabled()).toBe(true);
    await screenshot(page, 'compose-start-frame-refused');
    expect(uploads).toEqual([]);
    expectNoPageErrors(pageErrors);
  });
});
