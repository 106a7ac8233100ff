import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test as base, type TestInfo } from '@playwright/test';
import { assetFailure, startApp, type AppOptions, type RunningApp } from './app.ts';

export { expect } from '@playwright/test';

export interface AppFixtures {
  /** How the app is started; a file sets it with `test.use({ appOptions })`. */
  appOptions: AppOptions;
  /** The real app in browser mode, on a data directory of its own, stopped after the test. */
  app: RunningApp;
  /** Uncaught page errors and failed asset loads on every page of the test's context. */
  pageErrors: string[];
}

/**
 * Tests of the app in Chromium: `page` arrives with the app loaded and its sidebar shown. Each test
 * gets its own app and data directory; on failure the app's output is attached beside the trace.
 */
export const test = base.extend<AppFixtures>({
  appOptions: [{}, { option: true }],
  app: async ({ appOptions }, use, testInfo) => {
    const app = await startApp(appOptions);
    try {
      await use(app);
    } finally {
      if (testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach('app.log', { body: app.log.join('\n'), contentType: 'text/plain' });
        await attachAppState(testInfo, app.dataDir);
      }
      await app.stop();
    }
  },
  pageErrors: async ({ context }, use) => {
    const errors: string[] = [];
    context.on('weberror', (e) => errors.push(e.error().message));
    context.on('response', (r) => {
      const failure = assetFailure(r);
      if (failure) errors.push(failure);
    });
    await use(errors);
  },
  page: async ({ page, app, pageErrors }, use) => {
    // Named so that the watch starts before the app loads; the test reads it when it wants.
    void pageErrors;
    await page.goto(app.url);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await use(page);
  },
});

/**
 * What main knew when a test failed: the job journals (each transition with its reason) and the
 * app's and engine's log files, so a job stuck on screen can be told from one stuck in main.
 */
async function attachAppState(testInfo: TestInfo, dataDir: string): Promise<void> {
  const files = await readdir(dataDir, { recursive: true }).catch(() => [] as string[]);
  for (const file of files) {
    if (!/(^|\/)jobs\.db(-wal)?$|\.log$/.test(file)) continue;
    await testInfo.attach(file.replaceAll('/', '_'), { path: join(dataDir, file) }).catch(() => undefined);
  }
}
