import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/longest-first.ts';
import { postgresUnavailable } from './test/support/postgres.ts';

/**
 * Unit test files that replace a module (`vi.mock`): with files sharing one process, the module
 * another file imported first would be the one they get, so these run in the isolated `node`
 * project. Found by reading the files, so a new one cannot be forgotten.
 */
const UNIT_FILES_THAT_MOCK = readdirSync('test/unit', { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && !file.startsWith('renderer'))
  .map((file) => join('test/unit', file))
  .filter((file) => /\bvi\.(do)?mock\(/.test(readFileSync(file, 'utf8')));

/**
 * A test's limit in the projects that start services: three files share two cores (maxWorkers), so
 * a test takes up to half as long again as alone, more beside other work; the limit only catches a
 * test that hangs, and none asserts on wall time (docs/testing.md, "Workers, pool and isolation").
 */
const SERVICE_TEST_TIMEOUT = 120_000;

/** Loads `node:http` before a file's modules, as a real start does (test/support/builtins-first.ts). */
const NODE_SETUP = ['./test/support/builtins-first.ts'];

/**
 * The S3 pass (SQLite rows, files in S3, one node): the service's integration tests that store,
 * serve or delete files, run a second time with the files in a bucket of the file's own on the
 * run's s3rver (test/support/global-services.ts). The switch is CLIPDESK_TEST_STORAGE, read by
 * startTestService (test/integration/server/helpers.ts). docs/testing.md says what each pass
 * covers and why.
 */
const S3_MATRIX = [
  'test/integration/server/uploads.test.ts',
  'test/integration/server/upload-race.test.ts',
  'test/integration/server/file-urls.test.ts',
  'test/integration/server/files-retention.test.ts',
  'test/integration/server/generation.test.ts',
  'test/integration/server/image-url.test.ts',
  'test/integration/server/async-generations.test.ts',
  'test/integration/server/quota.test.ts',
];

/**
 * What the PostgreSQL+S3 pass leaves out of test/integration/server: files whose behavior cannot
 * differ with the database or the store (HTTP parsing, validation, routing, rendering, the
 * OpenAPI document), and files that skip themselves there anyway (they run `clipdesk-service`
 * on a SQLite file, or start clusters of their own). Everything else runs again there, new files
 * too, until they are listed here with their reason (docs/testing.md).
 */
const POSTGRES_PASS_LEAVES_OUT = [
  // Request parsing and validation, the same whatever stores the rows.
  'http-hardening',
  'openapi',
  'openai',
  // Routing and rendering: providers, models, parameters, fallbacks and the ffmpeg pipeline.
  'pipeline',
  'providers',
  'provider-fakes',
  // The end frame resolved and handed to a provider fake: the same whatever stores the rows.
  'end-frame',
  'provider-settings',
  'provider-unavailable',
  'routing',
  'routing-preview',
  // Prices: the charge is computed from the catalog, whichever store keeps the row.
  'prices',
  // They skip themselves on this pass (SQLite files, signals to one process, clusters of their own).
  'cli',
  'data-folder-lock',
  'export-import',
  'export-snapshot',
  'graceful-shutdown',
  'migrate',
  'migrate-postgres',
  'postgres-statements',
  'providers-cli',
  'signals',
].map((name) => `test/integration/server/${name}.test.ts`);

// Without PostgreSQL binaries here (`.ci/run` installs Debian's postgresql) the PostgreSQL pass is
// left out, said once, rather than failing every file.
const noPostgres = postgresUnavailable();
if (noPostgres !== null) console.warn(`vitest: the server-postgres pass is left out: ${noPostgres}`);

// Five projects: the unit tests of everything that runs in Node (shared, server, electron core),
// in one process; the integration tests, a process per file;
// the matrix's files again on S3 with SQLite (`npm run test:s3` runs only these); the service's
// integration tests that depend on the database or the store again in the team configuration,
// rows in PostgreSQL and files in S3, each service two nodes with requests alternating between them
// (one cluster and one s3rver for the run, test/support/global-services.ts, a database and a
// bucket per test file; the nodes behind a round-robin proxy, test/integration/server/helpers.ts;
// CLIPDESK_TEST_NODES=1 runs one; `npm run test:pg` runs this pass alone); and the renderer under
// jsdom. End-to-end tests run on Playwright's runner (playwright.config.ts), never here: every
// project excludes test/e2e even when a file filter would name one.
export default defineConfig({
  test: {
    // Three files at a time on CI's two cores (vitest's default for a run is cores - 1, one file at
    // a time there): a file spends much of its time waiting on its services, their ffmpeg renders,
    // their databases and lease timers, and at two files the cores were a fifth idle. The node and
    // PostgreSQL projects took 689 s at two, 527 s at three, 519 s at four with a render test past
    // its limit (docs/testing.md, "Workers, pool and isolation"). `--maxWorkers=1` runs one at a time.
    maxWorkers: 3,
    // The longest files first, across the projects, by a recorded run's times (test/support/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    // The default report, then each project's time and the 25 slowest files (docs/testing.md).
    reporters: ['default', './test/support/timing-reporter.ts'],
    // `npm run test:coverage`: statements and branches per source folder (scripts/coverage-by-folder.ts).
    coverage: {
      provider: 'v8',
      include: ['server/**', 'electron/**', 'shared/**', 'renderer/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
    },
    projects: [
      {
        // Pure logic, one process for all its files: a fresh process per file cost as much CPU as
        // the tests themselves (docs/testing.md, "Workers, pool and isolation").
        test: {
          name: 'unit',
          environment: 'node',
          setupFiles: NODE_SETUP,
          include: ['test/unit/**/*.test.ts'],
          exclude: ['test/unit/renderer/**', 'test/e2e/**', ...UNIT_FILES_THAT_MOCK],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
          isolate: false,
        },
      },
      {
        test: {
          name: 'node',
          environment: 'node',
          setupFiles: NODE_SETUP,
          include: ['test/integration/**/*.test.ts', ...UNIT_FILES_THAT_MOCK],
          exclude: ['test/e2e/**'],
          testTimeout: SERVICE_TEST_TIMEOUT,
          hookTimeout: SERVICE_TEST_TIMEOUT,
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
                setupFiles: NODE_SETUP,
                include: ['test/integration/server/**/*.test.ts'],
                exclude: ['test/e2e/**', ...POSTGRES_PASS_LEAVES_OUT],
                env: { CLIPDESK_TEST_DATABASE: 'postgres', CLIPDESK_TEST_STORAGE: 's3' },
                globalSetup: ['./test/support/global-services.ts'],
                testTimeout: SERVICE_TEST_TIMEOUT,
                hookTimeout: SERVICE_TEST_TIMEOUT,
                pool: 'forks',
              },
            },
          ]),
      {
        test: {
          name: 'node-s3',
          environment: 'node',
          setupFiles: NODE_SETUP,
          include: S3_MATRIX,
          env: { CLIPDESK_TEST_STORAGE: 's3' },
          globalSetup: ['./test/support/global-services.ts'],
          testTimeout: SERVICE_TEST_TIMEOUT,
          hookTimeout: SERVICE_TEST_TIMEOUT,
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
