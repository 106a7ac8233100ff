import { defineConfig } from 'vitest/config';

// End-to-end tests drive Debian's Chromium through playwright-core. One file at a time: each may
// start the app in browser mode with the Local engine and ffmpeg, which fills both cores.
export default defineConfig({
  test: {
    name: 'e2e',
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/e2e/**/*.test.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
