import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { Page } from '@playwright/test';
import { screenshot } from '../support/chromium.ts';
import { expect, test as appTest } from './support/fixtures.ts';
import { compose, expectNoPageErrors, generateButton, nav, RENDER_TIMEOUT_MS } from './support/pages.ts';

const run = promisify(execFile);
const CLI = 'server/cli/main.ts';

/**
 * A standalone service the test stops and starts again on the same address and data, as a remote
 * service that goes away (the network drops, the server restarts) and comes back.
 */
interface FlakyService {
  url: string;
  createKey(user: string): Promise<string>;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function flakyService(): Promise<FlakyService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-e2e-offline-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const c = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--data', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = c;
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: c.stdout }).on('line', (line) => {
        if (line.startsWith('listening on ')) resolve();
      });
      c.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
    });
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await gone;
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    async createKey(user) {
      const { stdout } = await run(process.execPath, [
        CLI,
        'keys',
        'create',
        '--user',
        user,
        '--tier',
        'basic',
        '--data',
        dataDir,
        '--json',
      ]);
      return (JSON.parse(stdout) as { key: string }).key;
    },
    stop,
    start,
    async dispose() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const test = appTest.extend<{ service: FlakyService }>({
  // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from this pattern
  service: async ({}, use) => {
    const service = await flakyService();
    try {
      await use(service);
    } finally {
      await service.dispose();
    }
  },
});

async function useRemoteProfile(page: Page, url: string, key: string): Promise<void> {
  await nav(page, 'Settings');
  await page.getByRole('button', { name: 'Add a remote service' }).click();
  const form = page.getByRole('form', { name: 'New profile' });
  await form.getByLabel('Profile name').fill('Studio server');
  await form.getByLabel('Base URL').fill(url);
  await form.getByRole('button', { name: 'Add profile' }).click();
  const profile = page.getByRole('group', { name: 'Profile Studio server' });
  await profile.getByLabel('API key', { exact: true }).fill(key);
  await profile.getByRole('button', { name: 'Save key' }).click();
  await profile.getByLabel('Stored key').waitFor();
  await profile.getByRole('button', { name: 'Use Studio server' }).click();
  await profile.getByText('Active').waitFor();
}

test.describe('compose offline, submit later', () => {
  test.use({ appOptions: { keychain: true } });

  test('a job composed while the service is unreachable waits for it, then runs when it is back', async ({
    page,
    pageErrors,
    service,
  }) => {
    test.setTimeout(2 * RENDER_TIMEOUT_MS);
    try {
      await useRemoteProfile(page, service.url, await service.createKey('traveller'));
      // The catalog loads while the service is there; then it goes away.
      await compose(page, {
        prompt: 'A lighthouse composed on a train with no signal',
        model: /^Motion/,
        shortest: true,
      });
      await service.stop();

      await generateButton(page).click();
      await nav(page, 'Queue');
      const row = page.getByRole('listitem', { name: 'Job: A lighthouse composed on a train with no signal' });
      // The first submit meets a refused connection (after the client's own retries), then waits.
      await expect(row.getByTestId('job-state')).toHaveText('Waiting for the service', { timeout: 60_000 });
      await expect(row.getByLabel('Why it waits')).toContainText(
        /Waiting for the service · (next try in \d+ s|trying now)/,
      );
      await expect(row.getByRole('alert')).toHaveCount(0);
      await expect(row.getByRole('button', { name: 'Try now' })).toBeVisible();
      await expect(page.getByRole('status', { name: 'Rate limit status' })).toHaveText('Waiting for the service');
      await screenshot(page, 'offline-waiting-for-the-service');

      // Back on the same address: the queue's next probe finds it and the job runs, with no click.
      await service.start();
      await expect(row.getByTestId('job-state')).toHaveText('Done', { timeout: RENDER_TIMEOUT_MS });
      await expect(row.getByLabel('Why it waits')).toHaveCount(0);
      await expect(page.getByRole('status', { name: 'Rate limit status' })).toHaveText('Slot free');
      await screenshot(page, 'offline-back-and-done');
    } catch (error) {
      await screenshot(page, 'offline-compose-failure');
      throw error;
    }
    expectNoPageErrors(pageErrors);
  });
});

test.describe('Submit at…', () => {
  test('a job scheduled for later says when, and "Submit now" sends it', async ({ page, pageErrors }) => {
    test.setTimeout(RENDER_TIMEOUT_MS);
    try {
      await compose(page, { prompt: 'A harbour at first light, scheduled', model: /^Motion/, shortest: true });
      const inAnHour = new Date(Date.now() + 3_600_000);
      const local = new Date(inAnHour.getTime() - inAnHour.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
      await page.getByLabel('Submit at…').fill(local);
      await screenshot(page, 'compose-submit-at');
      await generateButton(page).click();
      await nav(page, 'Queue');
      const row = page.getByRole('listitem', { name: 'Job: A harbour at first light, scheduled' });
      await expect(row.getByTestId('job-state')).toHaveText('Scheduled');
      await expect(row.getByLabel('Why it waits')).toContainText('Scheduled for ');
      await screenshot(page, 'queue-scheduled');
      await row.getByRole('button', { name: 'Submit now' }).click();
      await expect(row.getByTestId('job-state')).toHaveText('Done', { timeout: RENDER_TIMEOUT_MS });
    } catch (error) {
      await screenshot(page, 'submit-at-failure');
      throw error;
    }
    expectNoPageErrors(pageErrors);
  });
});
