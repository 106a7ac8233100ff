import { defineConfig } from 'vitest/config';
import { postgresUnavailable } from './test/support/postgres.ts';

// Without PostgreSQL binaries here (`.ci/run` installs Debian's postgresql) the PostgreSQL pass is
// left out, said once, rather than failing every file.
const noPostgres = postgresUnavailable();
if (noPostgres !== null) console.warn(`vitest: the server-postgres pass is left out: ${noPostgres}`);

// Three projects: everything that runs in Node (shared, server, electron core, integration tests),
// the service's integration suite again with its rows in PostgreSQL (the test matrix of issue 15:
// test/integration/server/helpers.ts starts a private cluster per file; `npm run test:pg` runs this
// pass alone), and the renderer under jsdom. End-to-end tests run on Playwright's runner (playwright.config.ts),
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
      ...(noPostgres !== null
        ? []
        : [
            {
              test: {
                name: 'server-postgres',
                environment: 'node',
                include: ['test/integration/server/**/*.test.ts'],
                exclude: ['test/e2e/**'],
                env: { CLIPDESK_TEST_DATABASE: 'postgres' },
                testTimeout: 60_000,
                hookTimeout: 60_000,
                pool: 'forks',
              },
            },
          ]),
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
