import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TierName } from '../../../shared/api/index.ts';
import { ManualClock } from '../../../shared/clock.ts';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import { afterAll } from 'vitest';
import { startService } from '../../../server/index.ts';
import { openServiceDatabase } from '../../../server/storage/db.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import type { RunningService, StartServiceOptions } from '../../../server/index.ts';

export interface TestService {
  service: RunningService;
  clock: ManualClock;
  dataDir: string;
  /** Creates a user (and key) and returns a client bound to it. */
  client(user: string, tier?: TierName, permissions?: Array<'read' | 'generate' | 'upload'>): Promise<TestClient>;
  stop(): Promise<void>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Whatever JSON.parse made of the response (tests read it loosely). */
  body: ReturnType<typeof JSON.parse>;
}

export interface TestClient {
  key: string;
  keyId: string;
  user: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
}

/**
 * The test matrix: `CLIPDESK_TEST_DATABASE=postgres` (npm run test:pg) runs this suite with every
 * service's rows in PostgreSQL: a private cluster per test file (test/support/postgres.ts), started
 * on first use and stopped after the file, and a fresh database per data directory (a service
 * started again on the same directory finds its rows again, as with SQLite).
 */
export const TEST_DATABASE: 'sqlite' | 'postgres' =
  process.env['CLIPDESK_TEST_DATABASE'] === 'postgres' ? 'postgres' : 'sqlite';
/** True on the PostgreSQL pass: for tests inherently about the SQLite file, which skip there. */
export const onPostgres = TEST_DATABASE === 'postgres';

let cluster: Promise<PrivatePostgres> | null = null;
const databases = new Map<string, Promise<string>>();
let created = 0;
if (onPostgres) {
  const why = postgresUnavailable();
  if (why !== null) throw new Error(`CLIPDESK_TEST_DATABASE=postgres, but ${why}`);
  afterAll(async () => {
    const running = cluster;
    cluster = null;
    databases.clear();
    await (await running)?.stop();
  });
}

/** The PostgreSQL database of a data directory on the PostgreSQL pass (made on first use); undefined on SQLite. */
export function testDatabaseFor(dataDir: string): Promise<string | undefined> {
  if (!onPostgres) return Promise.resolve(undefined);
  let url = databases.get(dataDir);
  if (!url) {
    cluster ??= startPostgres();
    url = cluster.then((c) => c.createDatabase(`svc_${process.pid}_${++created}`));
    databases.set(dataDir, url);
  }
  return url;
}

/** The service database of a data directory, as the service opens it (SQLite file or PostgreSQL). */
export async function openTestDatabase(dataDir: string): Promise<SqlDatabase> {
  const url = await testDatabaseFor(dataDir);
  return openServiceDatabase(url === undefined ? { kind: 'sqlite', dataDir } : { kind: 'postgres', url });
}

/**
 * The environment of a `clipdesk-service` process on `dataDir` (`base` and, on the PostgreSQL pass,
 * CLIPDESK_DATABASE_URL naming that directory's database, which every command reads).
 */
export async function processEnv(dataDir: string, base: NodeJS.ProcessEnv = process.env): Promise<NodeJS.ProcessEnv> {
  const url = await testDatabaseFor(dataDir);
  return url === undefined ? base : { ...base, CLIPDESK_DATABASE_URL: url };
}

/** The real service on loopback, with a clock the test moves and a temp data directory. */
export async function startTestService(opts: Partial<StartServiceOptions> = {}): Promise<TestService> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'clipdesk-svc-')));
  const clock = (opts.clock as ManualClock | undefined) ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 30));
  const database = opts.database ?? (await testDatabaseFor(dataDir));
  // Provider keys in the developer's environment must not reach tests: they never call a real provider.
  const service = await startService({
    sweepIntervalMs: 0,
    providerEnv: {},
    ...opts,
    dataDir,
    clock,
    ...(database !== undefined ? { database } : {}),
  });
  return {
    service,
    clock,
    dataDir,
    async client(user, tier = 'pro', permissions) {
      const created = await service.createKey({ user, tier, permissions });
      return clientFor(service.url, created.key, created.id, user);
    },
    async stop() {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function clientFor(url: string, key: string, keyId = '', user = ''): TestClient {
  return {
    key,
    keyId,
    user,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
  };
}

/** A small PNG made by ffmpeg (real, decodable). */
export async function makePng(dir: string, name = 'start.png', size = '64x48', color = 'orange'): Promise<string> {
  const path = join(dir, name);
  await runFfmpeg(['-f', 'lavfi', '-i', `color=c=${color}:s=${size}`, '-frames:v', '1', '-y', path]);
  return path;
}

/** The smallest video generation these tests make: cheap on a shared machine. */
export const SMALL_VIDEO = { model: 'clipdesk/motion', size: '360p', duration: 2 } as const;

/** What the tests read of a media item. */
export interface Item {
  id: string;
  url: string;
  mime: string;
  user: string;
  prompt: string;
  provider: string;
  media: string;
  thumbnailUrl: string;
  formats: Array<{ mime: string; url: string; bytes: number }>;
  expiresAt: string | null;
  downloadedAt: string | null;
  [key: string]: unknown;
}

/** `result.medias` of a list response. */
export function listed(body: ReturnType<typeof JSON.parse>): Item[] {
  return (body as { result: { medias: Item[] } }).result.medias;
}

/** A single record (`GET /media/:id`, upload completion, retain …): `result`. */
export function single(body: ReturnType<typeof JSON.parse>): Item {
  return (body as { result: Item }).result;
}

/** `data` of a generation response. */
export function generated(body: ReturnType<typeof JSON.parse>): Item[] {
  return (body as { data: Item[] }).data;
}
