import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './test/e2e/support/chromium.ts';

// End-to-end tests in Debian's Chromium. One worker: each test may start the app in browser mode
// with the Local engine and ffmpeg, which fills both cores of the machines this runs on. Timeouts
// are generous for the same reason; no test asserts on wall time.
export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.test.ts',
  outputDir: 'test-results/e2e',
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  timeout: 300_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    viewport: { width: 1440, height: 900 },
    colorScheme: 'dark',
    acceptDownloads: true,
    // Kept only when a test fails: `npx playwright show-trace test-results/e2e/<test>/trace.zip`.
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
