import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { inject } from 'vitest';
import { s3ClientConfig } from '../../server/storage/blobs/s3.ts';
import { S3RVER_CREDENTIALS } from './s3.ts';
import type { TestS3 } from './s3.ts';

/**
 * The PostgreSQL cluster and the s3rver one vitest run shares (started by
 * test/support/global-services.ts, vitest's globalSetup), as each test file sees them. A file gets
 * databases and a bucket of its own, so files never see each other's rows or keys; only tests that
 * stop or restart the server itself (halt()/resume()) still start a private cluster. Without
 * them (a project without the global setup, or a script outside vitest) these return null and the
 * callers start private ones, as before.
 */
export interface SharedPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  /** A database migrated to the service's current schema, the template of every test database. */
  template: string;
}

export interface SharedS3 {
  endpoint: string;
  /** The directory s3rver stores into: each bucket is a directory there. */
  dir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    sharedPostgres: SharedPostgres | null;
    sharedS3: SharedS3 | null;
  }
}

function provided<K extends 'sharedPostgres' | 'sharedS3'>(key: K): ReturnType<typeof inject<K>> | null {
  try {
    return inject(key) ?? null;
  } catch {
    // Outside a vitest worker.
    return null;
  }
}

/** The run's shared cluster, or null. */
export function sharedPostgres(): SharedPostgres | null {
  return provided('sharedPostgres');
}

/** Random enough to keep apart databases and buckets of files run at once or one after another (pids repeat). */
function uniqueSuffix(): string {
  return randomBytes(6).toString('hex');
}

/**
 * A new database on the shared cluster, copied from the migrated template (`CREATE DATABASE …
 * TEMPLATE`, a file copy: far cheaper than a cluster or a migration); resolves with its URL.
 */
export async function createTemplateDatabase(shared: SharedPostgres, prefix = 'svc'): Promise<string> {
  // `svc_PID_N`, the names private clusters' databases have always had (tests match them).
  const name = `${prefix}_${process.pid}_${randomInt(1, 2 ** 47)}`;
  const client = new pg.Client({ connectionString: shared.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${shared.template}`);
  } finally {
    await client.end();
  }
  const url = new URL(shared.url);
  url.pathname = `/${name}`;
  return url.href;
}

/** Drops databases made by createTemplateDatabase, closing what still holds them (a file's end). */
export async function dropDatabases(shared: SharedPostgres, urls: string[]): Promise<void> {
  if (urls.length === 0) return;
  const client = new pg.Client({ connectionString: shared.url });
  await client.connect();
  try {
    for (const url of urls) {
      const name = new URL(url).pathname.slice(1);
      if (/^[a-z_][a-z0-9_]*$/.test(name)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}

/**
 * A bucket of this test file's own on the run's shared s3rver, as a TestS3 (test/support/s3.ts);
 * null without one. `stop()` (or this process's exit) removes the bucket's directory.
 */
export async function sharedS3Bucket(prefix = 'clipdesk'): Promise<TestS3 | null> {
  const shared = provided('sharedS3');
  if (shared === null) return null;
  const bucket = `${prefix}-${uniqueSuffix()}`;
  const env: NodeJS.ProcessEnv = {
    CLIPDESK_S3_ENDPOINT: shared.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
  };
  const client = () => new S3Client({ ...s3ClientConfig(env), region: 'us-east-1', credentials: S3RVER_CREDENTIALS });
  const creator = client();
  try {
    await creator.send(new CreateBucketCommand({ Bucket: bucket }));
  } finally {
    creator.destroy();
  }
  const bucketDir = join(shared.dir, bucket);
  const removeSync = () => rmSync(bucketDir, { recursive: true, force: true });
  process.once('exit', removeSync);
  let stopping: Promise<void> | null = null;
  return {
    endpoint: shared.endpoint,
    bucket,
    dir: shared.dir,
    env,
    client,
    pendingMultipartUploads() {
      const uploads = join(bucketDir, '._S3rver_uploads');
      return existsSync(uploads) ? readdirSync(uploads) : [];
    },
    stop() {
      stopping ??= (async () => {
        process.removeListener('exit', removeSync);
        await rm(bucketDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
