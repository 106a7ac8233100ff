import { screenshot } from '../support/chromium.ts';
import { expect, test } from './support/fixtures.ts';
import { dropStartFrame, testCardPng } from './support/frames.ts';
import {
  compose,
  expectNoPageErrors,
  generateButton,
  jobs,
  nav,
  RENDER_TIMEOUT_MS,
  waitForJobsToFinish,
} from './support/pages.ts';

test.describe('the routing preview', () => {
  test('image-to-video: three rows from the service, cheapest drops the start frame, and the queue gets what optimal promised', async ({
    app,
    page,
    pageErrors,
  }) => {
    const card = await testCardPng(app.dataDir);
    await compose(page, { prompt: 'A paper boat from the test card', model: /^Motion/, shortest: true });
    await dropStartFrame(page, { name: 'frame.png', type: 'image/png', base64: card.base64 });
    await page.getByRole('img', { name: 'Start frame preview: frame.png' }).waitFor();

    // The case: optimal is Local Prism at $0.046 for 2 s, not the Local Studio the renderer once guessed.
    const optimal = page.getByTestId('route-optimal');
    const cheapest = page.getByTestId('route-cheapest');
    const compatible = page.getByTestId('route-compatible');
    await expect(optimal.getByTestId('route-provider')).toHaveText('Local Prism (procedural)');
    await expect(optimal.getByTestId('route-price')).toHaveText('$0.046');
    await expect(optimal).toContainText('supports HD too');
    await expect(cheapest.getByTestId('route-provider')).toHaveText('Local Swift (procedural)');
    await expect(cheapest.getByTestId('route-price')).toHaveText('$0.020');
    await expect(cheapest.getByTestId('route-drops')).toHaveText('Drops start frame');
    await expect(compatible.getByTestId('route-provider')).toHaveText('Local Studio (procedural)');
    await expect(compatible.getByTestId('route-price')).toHaveText('$0.040');
    await expect(optimal).toHaveClass(/selected/);
    await expect(page.getByLabel('Estimated price')).toHaveText('$0.046');
    await expect(page.getByTestId('start-frame-dropped')).toHaveCount(0);

    // Choosing cheapest says, before submit and beside the frame, that the frame would be dropped.
    await page.getByRole('radio', { name: 'Cheapest' }).check();
    await expect(page.getByTestId('start-frame-dropped')).toBeVisible();
    await expect(page.getByLabel('Estimated price')).toHaveText('$0.020');
    await expect(cheapest).toHaveClass(/selected/);
    await screenshot(page, 'compose-routing-preview-cheapest');
    await page.getByRole('radio', { name: 'Optimal' }).check();
    await expect(page.getByTestId('start-frame-dropped')).toHaveCount(0);
    await screenshot(page, 'compose-routing-preview');

    await generateButton(page).click();
    await nav(page, 'Queue');
    const row = jobs(page).first();
    await expect(row.getByTestId('job-provider')).toHaveText('Local Prism (procedural)');
    await expect(row.getByTestId('job-price')).toHaveText('$0.046');
    expect(await waitForJobsToFinish(page, 1, RENDER_TIMEOUT_MS)).toEqual(['Done']);
    // After the run: the provider and price the generation reported, the same as promised.
    await expect(row.getByTestId('job-provider')).toHaveText('Local Prism (procedural)');
    await expect(row.getByTestId('job-price')).toHaveText('$0.046');
    await expect(row).toContainText('start frame');
    await expect(row.getByTestId('job-frame-dropped')).toHaveCount(0);
    await screenshot(page, 'queue-routing-preview');
    expectNoPageErrors(pageErrors);
  });
});
