import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test as appTest } from './support/fixtures.ts';
import { compose, expectNoPageErrors, nav, RENDER_TIMEOUT_MS, waitForJobsToFinish } from './support/pages.ts';
import { startService, type RemoteService } from './support/service.ts';

/** Adds the remote profile through Settings, stores its key (masked) and makes it active. */
async function addRemoteProfile(page: Page, url: string, key: string): Promise<void> {
  await nav(page, 'Settings');
  await page.getByRole('button', { name: 'Add a remote service' }).click();
  const form = page.getByRole('form', { name: 'New profile' });
  await form.getByLabel('Profile name').fill('Free account');
  await form.getByLabel('Base URL').fill(url);
  await form.getByRole('button', { name: 'Add profile' }).click();
  const profile = page.getByRole('group', { name: 'Profile Free account' });
  await profile.getByLabel('API key', { exact: true }).fill(key);
  await profile.getByRole('button', { name: 'Save key' }).click();
  await profile.getByLabel('Stored key').waitFor();
  expect(await profile.getByLabel('Stored key').textContent()).toBe(`••••••••${key.slice(-4)}`);
  expect(await page.content()).not.toContain(key);
  await profile.getByRole('button', { name: 'Use Free account' }).click();
  await profile.getByText('Active').waitFor();
}

/** A standalone service beside the app, stopped after the test. */
const test = appTest.extend<{ service: RemoteService }>({
  // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from this pattern
  service: async ({}, use) => {
    const service = await startService();
    try {
      await use(service);
    } finally {
      await service.stop();
    }
  },
});

test.describe('rate limits and keys on a free-tier remote profile', () => {
  test.use({ appOptions: { keychain: true } });

  test('more jobs than the free tier runs at once: they wait, and none fail; a revoked key says so and can be fixed', async ({
    page,
    pageErrors,
    service,
  }) => {
    // Five videos one after another (four variations and a retry), each waiting for the last.
    test.setTimeout(6 * RENDER_TIMEOUT_MS);
    const first = await service.createKey('creator', 'free');
    // The free tier's one video at a time is what this test is about. Its 10 requests a minute
    // would add two idle minute windows to the run (the app's polls and library syncs for five
    // jobs); waiting one out is covered where it is cheap: the client against the real engine
    // (engine.test.ts) and the queue's "Rate limited" notice (async-variations.test.tsx).
    await service.setLimits('creator', { rpm: 100 });
    try {
      await journey(page, service, first);
    } catch (error) {
      await screenshot(page, 'rate-limits-failure');
      throw error;
    }
    expectNoPageErrors(pageErrors);
  });

  async function journey(page: Page, service: RemoteService, first: { id: string; key: string }): Promise<void> {
    await addRemoteProfile(page, service.url, first.key);
    await screenshot(page, 'settings-remote-profile');

    // Free tier: one video at a time. Four variations must queue behind each other.
    await compose(page, { prompt: 'Four takes of a paper boat on a puddle', model: /^Motion/, shortest: true });
    await page.getByLabel('Variations').fill('4');
    await page.getByRole('button', { name: 'Generate ×4' }).click();
    await nav(page, 'Queue');
    await page.getByRole('region', { name: 'Waiting' }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'queue-waiting');
    const states = await waitForJobsToFinish(page, 4, 4 * RENDER_TIMEOUT_MS);
    expect(states).toEqual(['Done', 'Done', 'Done', 'Done']);

    // Revoke the key behind the app's back: the next job fails with the service's message and a way to fix it.
    await service.revokeKey(first.id);
    await compose(page, { prompt: 'After the key was revoked', model: /^Motion/, shortest: true });
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    const toast = page.getByRole('alert').filter({ hasText: 'The API key was refused' });
    await toast.waitFor({ timeout: 60_000 });
    expect(await toast.textContent()).toContain('Invalid API key');
    await screenshot(page, 'revoked-key');
    await toast.getByRole('button', { name: 'Fix API key' }).click();
    const profile = page.getByRole('group', { name: 'Profile Free account' });
    await profile.getByRole('button', { name: 'Replace key' }).click();
    const second = await service.createKey('creator', 'free');
    await profile.getByLabel('New API key').fill(second.key);
    await profile.getByRole('button', { name: 'Save key' }).click();
    await expect.poll(() => profile.getByLabel('Stored key').textContent()).toBe(`••••••••${second.key.slice(-4)}`);

    await nav(page, 'Queue');
    const failed = page.getByRole('listitem', { name: 'Job: After the key was revoked' });
    await failed.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => failed.getByTestId('job-state').textContent(), { timeout: RENDER_TIMEOUT_MS }).toBe('Done');
  }
});
