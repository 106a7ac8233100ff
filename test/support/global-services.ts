import type { TestProject } from 'vitest/node';
import { migratePostgres } from '../../server/storage/pg/migrate.ts';
import { postgresUnavailable, startPostgres } from './postgres.ts';
import type { PrivatePostgres } from './postgres.ts';
import { startS3 } from './s3.ts';
import type { TestS3 } from './s3.ts';
import type { SharedPostgres } from './shared-services.ts';

/**
 * vitest's globalSetup for the projects that store in PostgreSQL or S3 (vitest.config.ts; the
 * project's CLIPDESK_TEST_DATABASE and CLIPDESK_TEST_STORAGE say which): one PostgreSQL cluster,
 * with a database migrated once as the template of every test database, and one s3rver, for the
 * whole run, handed to the test files through `provide` (read by test/support/shared-services.ts).
 * Starting a cluster and an s3rver per test file cost about 4 s a file (docs/testing.md). Projects
 * share them: they start with the first project that asks and stop after the last one is done,
 * in vitest's main process (kept on globalThis, in case each project loads this module anew).
 */
const TEMPLATE = 'clipdesk_template';

interface Running<T> {
  service: Promise<T>;
  users: number;
}

interface Held {
  postgres: Running<{ cluster: PrivatePostgres; shared: SharedPostgres }> | null;
  s3: Running<TestS3> | null;
}

const held: Held = ((globalThis as { clipdeskSharedServices?: Held }).clipdeskSharedServices ??= {
  postgres: null,
  s3: null,
});

async function startSharedPostgres(): Promise<{ cluster: PrivatePostgres; shared: SharedPostgres }> {
  const cluster = await startPostgres();
  try {
    const url = await cluster.createDatabase(TEMPLATE);
    await migratePostgres(url);
    return { cluster, shared: { url: cluster.url, template: TEMPLATE } };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

function use<T>(running: Running<T> | null, start: () => Promise<T>): Running<T> {
  const held = running ?? { service: start(), users: 0 };
  held.users++;
  return held;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = project.config.env ?? {};
  const wantsPostgres = env['CLIPDESK_TEST_DATABASE'] === 'postgres' && postgresUnavailable() === null;
  const wantsS3 = env['CLIPDESK_TEST_STORAGE'] === 's3';
  if (wantsPostgres) held.postgres = use(held.postgres, startSharedPostgres);
  if (wantsS3) held.s3 = use(held.s3, () => startS3({ bucket: 'clipdesk-shared' }));
  const [pgRunning, s3Running] = await Promise.all([held.postgres?.service, held.s3?.service]);
  project.provide('sharedPostgres', wantsPostgres && pgRunning ? pgRunning.shared : null);
  project.provide('sharedS3', wantsS3 && s3Running ? { endpoint: s3Running.endpoint, dir: s3Running.dir } : null);
  return async () => {
    if (wantsPostgres && held.postgres && --held.postgres.users === 0) {
      const { cluster } = await held.postgres.service;
      held.postgres = null;
      await cluster.stop();
    }
    if (wantsS3 && held.s3 && --held.s3.users === 0) {
      const server = await held.s3.service;
      held.s3 = null;
      await server.stop();
    }
  };
}
