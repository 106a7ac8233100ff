import { defineConfig } from 'vitest/config';

// Two projects: everything that runs in Node (shared, server, electron core, integration tests),
// and the renderer under jsdom. End-to-end tests run on Playwright's runner (playwright.config.ts),
// never here: both projects exclude test/e2e even when a file filter would name one.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: ['test/unit/renderer/**', 'test/e2e/**'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
      {
        test: {
          name: 'renderer',
          environment: 'jsdom',
          include: ['test/unit/renderer/**/*.test.{ts,tsx}'],
          exclude: ['test/e2e/**'],
          testTimeout: 20_000,
        },
      },
    ],
  },
});
