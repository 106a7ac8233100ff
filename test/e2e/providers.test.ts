// Provider keys end to end in browser mode (docs/providers.md): a provider key pasted in Settings, pointed at the fal
// contract fake, makes fal's models appear in the picker with their prices, and a generation
// through fal lands in the library.
//
// The fake is a loopback server following fal's queue API; the app's fal SDK reaches it only
// through the base URL set in Settings → Providers → Advanced.
//
// On the same app: Compose → "More settings" shows a Kling and a Veo model's own parameters (the
// hand-kept catalog's), refuses a value that breaks its rule, and a valid one reaches fal's fake
// in the job's input (docs/workflows.md).
import { startFalFake } from '../fakes/providers/fal.ts';
import { screenshot } from './support/chromium.ts';
import { expect, test } from './renderer/support/fixtures.ts';
import {
  expectNoPageErrors,
  generateButton,
  nav,
  openOptions,
  pickModel,
  RENDER_TIMEOUT_MS,
  waitForJobsToFinish,
} from './renderer/support/pages.ts';

// Provider keys live in the OS keychain: the app runs in a D-Bus session with its own gnome-keyring.
test.use({ appOptions: { keychain: true } });

test.describe('Use your own provider account', () => {
  test('paste a fal key → test it → fal models with prices in the picker → their own parameters → generate → library', async ({
    page,
    pageErrors,
  }) => {
    const fake = await startFalFake();
    try {
      await nav(page, 'Settings');
      const fal = page.getByRole('group', { name: /^Provider fal/i });
      await fal.getByLabel(/API key/).fill(fake.key);
      await fal.getByRole('button', { name: 'Save key' }).click();
      // Only the last four characters ever come back, and the field is gone.
      // The key's last 4 characters, then where it is kept (Settings says where each key comes from).
      await expect(fal.getByLabel(/^Stored .* key$/)).toHaveText(`Key ••••${fake.key.slice(-4)} · from keychain`);
      await expect(fal.locator('input[type="password"]')).toHaveCount(0);
      expect(await page.content()).not.toContain(fake.key);

      await fal.getByText('Advanced').click();
      await fal.getByLabel('API base URL').fill(fake.baseUrl);
      await fal.getByRole('button', { name: 'Save', exact: true }).click();
      await expect(fal.getByRole('button', { name: 'Use default' })).toBeVisible();

      await fal.getByRole('button', { name: 'Test key' }).click();
      await expect(fal.getByRole('status')).toHaveText(/accepted the key/);
      // The Local engine's catalog can be refreshed from here (docs/providers.md, "Refresh models").
      await expect(page.getByRole('button', { name: 'Refresh models' })).toBeEnabled();
      await screenshot(page, 'settings-providers-fal');

      await nav(page, 'Compose');
      await page.getByLabel('Prompt', { exact: true }).fill('A paper boat on a stormy sea');
      // fal's models are in the picker (the dock's model chip), each naming fal and its catalog price;
      // the drawer shows the routing preview and the provider pin.
      await openOptions(page);
      await page.getByRole('button', { name: /^Model:/ }).click();
      const falModels = page.getByRole('option', { name: /offered by .*\bfal\S* \$\d+\.\d+ ?\/ ?s/i });
      await expect(falModels.first()).toBeVisible();
      // A model whose price depends on the request shows its table (docs/providers.md, "Prices"), and
      // the routing preview says which line priced this request: Veo 3 makes sound by default.
      await pickModel(page, /^Veo 3 \(google\/veo-3\), .*fal\S* silent \$0\.200\/s · with sound \$0\.400\/s$/);
      await expect(page.getByTestId('route-basis').first()).toHaveText('at with sound $0.400/s');
      await screenshot(page, 'compose-price-table');

      // Veo 3's own parameters: a switch for its soundtrack and a negative prompt.
      await pickModel(page, /^Veo 3 \(google\/veo-3\)/);
      const more = page.locator('details.more-settings');
      await more.getByText(/^More settings/).click();
      await expect(more.getByRole('checkbox', { name: 'Audio' })).toBeVisible();
      await expect(more.getByLabel('Negative prompt')).toBeVisible();

      // Kling 2.1's: a negative prompt and its CFG scale (0 to 1), aspect ratio in the main form.
      await pickModel(page, /^Kling 2\.1/);
      await page.getByLabel('Provider', { exact: true }).selectOption('fal');
      // The service's routing preview names the pinned provider (docs/workflows.md).
      await expect(page.getByText(/^Pinned to fal\S*$/i)).toBeVisible();
      await expect(page.getByLabel('Aspect ratio')).toBeVisible();
      if (!(await more.evaluate((d) => (d as HTMLDetailsElement).open))) await more.getByText(/^More settings/).click();
      await more.getByLabel('CFG scale').fill('2');
      await expect(more.getByText('CFG scale takes at most 1, not 2')).toBeVisible();
      await expect(generateButton(page)).toBeDisabled();
      await more.getByLabel('CFG scale').fill('0.5');
      await more.getByLabel('Negative prompt').fill('blurry, text');
      await expect(generateButton(page)).toBeEnabled();
      // Kling's 5 s from text at fal (its Master endpoint's $1.40), once the preview of this
      // request is in (Veo's 8 s would be $3.20).
      await expect(page.getByLabel('Estimated price')).toHaveText(/^\$1\.40/);
      await more.getByLabel('CFG scale').scrollIntoViewIfNeeded();
      await screenshot(page, 'compose-more-settings');

      await generateButton(page).click();
      await page.getByRole('status').filter({ hasText: 'Job queued' }).waitFor();
      await nav(page, 'Queue');
      expect(await waitForJobsToFinish(page, 1, RENDER_TIMEOUT_MS)).toEqual(['Done']);
      expect(fake.submissions()).toBe(1);
      // The model's own parameters reached fal, by the model's names.
      expect([...fake.inputs.values()]).toEqual([
        expect.objectContaining({ cfg_scale: 0.5, negative_prompt: 'blurry, text', aspect_ratio: '16:9' }),
      ]);

      await nav(page, 'Library');
      await page.getByRole('option', { name: /A paper boat on a stormy sea/ }).waitFor({ timeout: 30_000 });
      expectNoPageErrors(pageErrors);
    } finally {
      await fake.close();
    }
  });
});
