import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig } from '../../server/storage/blobs/s3.ts';

const SERVER = fileURLToPath(new URL('./s3-server.ts', import.meta.url));

/** s3rver's fixed credentials (it checks signatures against them). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * An S3-compatible server (npm's s3rver, with the fixes in s3-server.ts) for one test file or
 * benchmark, in a process of its own, on a free loopback port, storing into a temp directory, with
 * one bucket created. `stop()` ends it and removes the directory; a process that exits or is
 * signalled without calling it does the same on the way out, and the server ends by itself (and
 * removes its directory) when this process dies, since its stdin is a pipe only we hold.
 */
export interface TestS3 {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  bucket: string;
  /** The temp directory the server stores into. */
  dir: string;
  /** The environment a client built the service's way (s3ClientConfig) needs: endpoint, region, credentials. */
  env: NodeJS.ProcessEnv;
  /** A new client for this server (path-style, s3rver's credentials); the caller destroys it. */
  client(): S3Client;
  /** Multipart uploads begun and neither completed nor aborted (s3rver keeps their parts on disk). */
  pendingMultipartUploads(): string[];
  stop(): Promise<void>;
}

const live = new Map<string, () => void>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  const stopAll = () => {
    for (const stop of [...live.values()]) stop();
  };
  process.once('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      stopAll();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

export async function startS3(options: { bucket?: string } = {}): Promise<TestS3> {
  const bucket = options.bucket ?? 'clipdesk-test';
  if (bucket.length < 3) throw new Error('bucket names have at least 3 characters');
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-s3-'));
  const child: ChildProcess = spawn(process.execPath, [SERVER, dir, bucket], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stopSync = () => {
    live.delete(dir);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  hookExit();
  live.set(dir, stopSync);

  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /^listening (\d+)\n/m.exec(stdout);
        if (m) resolve(Number(m[1]));
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`s3rver exited ${code}: ${stderr}`)));
    });
  } catch (error) {
    stopSync();
    throw error;
  }
  child.stdin?.on('error', () => undefined);
  const endpoint = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    CLIPDESK_S3_ENDPOINT: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
  };
  let stopping: Promise<void> | null = null;
  return {
    endpoint,
    bucket,
    dir,
    env,
    client: () => new S3Client({ ...s3ClientConfig(env), region: 'us-east-1', credentials: S3RVER_CREDENTIALS }),
    pendingMultipartUploads() {
      const uploads = join(dir, bucket, '._S3rver_uploads');
      return existsSync(uploads) ? readdirSync(uploads) : [];
    },
    stop() {
      stopping ??= (async () => {
        live.delete(dir);
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((r) => child.once('exit', r));
          child.stdin?.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
        await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
