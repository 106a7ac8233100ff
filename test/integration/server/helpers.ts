import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { MediaKind, TierName } from '../../../shared/api/index.ts';
import { ManualClock } from '../../../shared/clock.ts';
import { runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import { afterAll } from 'vitest';
import { startService } from '../../../server/index.ts';
import { OPERATOR_CATALOG_FILE } from '../../../server/providers/catalog-file/load.ts';
import { PROVIDER_ENV_KEYS, PROVIDER_KEY_FILE, readKeyFile } from '../../../server/providers/provider-keys.ts';
import { openServiceDatabase } from '../../../server/storage/db.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import {
  createTemplateDatabase,
  dropDatabases,
  sharedPostgres,
  sharedS3Bucket,
} from '../../support/shared-services.ts';
import type { RunningService, StartServiceOptions } from '../../../server/index.ts';
import type { BlobStore } from '../../../server/storage/blobs/index.ts';
import { createDiskBlobStore } from '../../../server/storage/blobs/index.ts';
import type { TestS3 } from '../../support/s3.ts';
import { startRoundRobin } from '../../support/round-robin.ts';

/**
 * The test matrix's storage switch: `CLIPDESK_TEST_STORAGE=s3` (`npm run test:s3`) runs the same
 * tests with the service's files in an S3 bucket (a bucket of the test file's own on the run's
 * s3rver, test/support/global-services.ts, or without one a private s3rver; each service under a
 * prefix of its own); unset or `disk`, in the data directory as the one-machine service.
 */
export const TEST_STORAGE: 'disk' | 's3' = process.env['CLIPDESK_TEST_STORAGE'] === 's3' ? 's3' : 'disk';

let s3Server: Promise<TestS3> | null = null;

/**
 * The test file's S3 bucket, made on first use: on the run's shared s3rver where the project has
 * one, else on an s3rver of the file's own. Either ends with the test process.
 */
export function testS3(): Promise<TestS3> {
  s3Server ??= sharedS3Bucket('clipdesk-matrix').then(
    async (shared) =>
      shared ?? (await import('../../support/s3.ts').then(({ startS3 }) => startS3({ bucket: 'clipdesk-matrix' }))),
  );
  return s3Server;
}

/** A store for one test service: the matrix's kind, or the one asked for. */
async function openTestStore(
  dataDir: string,
  kind: 'disk' | 's3',
): Promise<{ store: BlobStore | undefined; view: BlobStore; close(): void }> {
  if (kind === 'disk') return { store: undefined, view: createDiskBlobStore(dataDir), close: () => undefined };
  const s3 = await testS3();
  const { createS3BlobStore } = await import('../../../server/storage/blobs/s3.ts');
  const client = s3.client();
  const store = createS3BlobStore({ bucket: s3.bucket, prefix: s3PrefixFor(dataDir), client });
  return { store, view: store, close: () => client.destroy() };
}

/**
 * A data directory's prefix in the matrix's bucket: services of one file keep apart, and a restart
 * on the same data directory (in this process or a `clipdesk-service` one) finds its files again.
 */
function s3PrefixFor(dataDir: string): string {
  return `svc-${basename(dataDir).replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The keys stored under `prefix` (`media/`) for a data directory, wherever the pass keeps its files
 * (the data directory, or its prefix in the bucket): for tests of `clipdesk-service` processes.
 */
export async function storedKeysOf(dataDir: string, prefix: string): Promise<string[]> {
  const files = await openTestStore(dataDir, TEST_STORAGE);
  try {
    const keys: string[] = [];
    for await (const blob of files.view.list(prefix)) keys.push(blob.key);
    return keys.sort();
  } finally {
    files.close();
  }
}

export interface TestService {
  service: RunningService;
  clock: ManualClock;
  dataDir: string;
  /** Where its files are: 'disk' (the data directory) or 's3'. */
  storage: 'disk' | 's3';
  /** The store the service keeps its files in, for tests that look at what is stored. */
  store: BlobStore;
  /** Keys stored under `prefix` (`media/`, `uploads/`), sorted. */
  storedKeys(prefix: string): Promise<string[]>;
  /** Anything half-done: work files under the data directory's tmp/, and (S3) multipart uploads never completed nor aborted. */
  leftovers(): Promise<string[]>;
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
 * The test matrix's database switch: `CLIPDESK_TEST_DATABASE=postgres` (npm run test:pg) runs this
 * suite with every service's rows in PostgreSQL, a fresh database per data directory (a service
 * started again on the same directory finds its rows again, as with SQLite): on the run's shared
 * cluster (test/support/global-services.ts), copied from its migrated template and dropped after
 * the file; without one, on a private cluster (test/support/postgres.ts) started on first use and
 * stopped after the file.
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
    const made = [...databases.values()];
    cluster = null;
    databases.clear();
    const shared = sharedPostgres();
    if (shared !== null) {
      const urls = await Promise.allSettled(made);
      await dropDatabases(
        shared,
        urls.flatMap((u) => (u.status === 'fulfilled' ? [u.value] : [])),
      );
    }
    await (await running)?.stop();
  });
}

/** The PostgreSQL database of a data directory on the PostgreSQL pass (made on first use); undefined on SQLite. */
export function testDatabaseFor(dataDir: string): Promise<string | undefined> {
  if (!onPostgres) return Promise.resolve(undefined);
  let url = databases.get(dataDir);
  if (!url) {
    const shared = sharedPostgres();
    if (shared !== null) url = createTemplateDatabase(shared);
    else {
      cluster ??= startPostgres();
      url = cluster.then((c) => c.createDatabase(`svc_${process.pid}_${++created}`));
    }
    databases.set(dataDir, url);
  }
  return url;
}

/** The service database of a data directory, as the service opens it (SQLite file or PostgreSQL). */
export async function openTestDatabase(dataDir: string): Promise<SqlDatabase> {
  const url = await testDatabaseFor(dataDir);
  return openServiceDatabase(url === undefined ? { kind: 'sqlite', dataDir } : { kind: 'postgres', url });
}

/** pg-boss's least lease, the one `--lease-timeout` accepts at least. */
const SHORTEST_LEASE_SECONDS = 10;

/**
 * The environment of a `clipdesk-service` process on `dataDir`: `base` and, on the PostgreSQL pass,
 * CLIPDESK_DATABASE_URL naming that directory's database; on the S3 pass, CLIPDESK_STORAGE_URL
 * naming its prefix in the file's bucket and the S3 settings (every command reads both), so a
 * process keeps its rows and files where startTestService would.
 */
export async function processEnv(dataDir: string, base: NodeJS.ProcessEnv = process.env): Promise<NodeJS.ProcessEnv> {
  const url = await testDatabaseFor(dataDir);
  // A killed node's generations wait for its queue lease to lapse before another node takes them:
  // the shortest lease (10 s) unless the test names one, so a takeover costs 10 s of the run, not 30.
  const env =
    url === undefined
      ? base
      : { CLIPDESK_LEASE_TIMEOUT: String(SHORTEST_LEASE_SECONDS), ...base, CLIPDESK_DATABASE_URL: url };
  if (TEST_STORAGE !== 's3') return env;
  const s3 = await testS3();
  return { ...env, ...s3.env, CLIPDESK_STORAGE_URL: `s3://${s3.bucket}/${s3PrefixFor(dataDir)}` };
}

/**
 * How many nodes `startTestService` runs for one service: `CLIPDESK_TEST_NODES=1|2`. Default 2 on
 * the PostgreSQL pass (the team configuration: several nodes on one database and one bucket, with
 * requests alternating between them), 1 otherwise. Two nodes need the shared database.
 */
export const TEST_NODES: 1 | 2 = testNodes(process.env['CLIPDESK_TEST_NODES']);

function testNodes(setting: string | undefined): 1 | 2 {
  if (setting === undefined || setting === '') return onPostgres ? 2 : 1;
  if (setting !== '1' && setting !== '2') throw new Error(`CLIPDESK_TEST_NODES must be 1 or 2, not '${setting}'`);
  if (setting === '2' && !onPostgres)
    throw new Error("CLIPDESK_TEST_NODES=2 needs the nodes' shared database: CLIPDESK_TEST_DATABASE=postgres");
  return setting === '2' ? 2 : 1;
}

/**
 * What a node reads from its data directory at start, besides work files: the operator's
 * provider key file and catalog. A deployment gives every node the same; the second node gets a
 * copy of the first's.
 */
const NODE_CONFIGURATION = [PROVIDER_KEY_FILE, OPERATOR_CATALOG_FILE];

/**
 * The real service on loopback, with a clock the test moves and a temp data directory; its rows in
 * SQLite or PostgreSQL as TEST_DATABASE says, its files on disk or in S3 as TEST_STORAGE says (or
 * `storage` asks).
 *
 * With TEST_NODES at 2 (the PostgreSQL pass), or `nodes: 2`, the service is two nodes on the same
 * database and the same files, behind a round-robin proxy (test/support/round-robin.ts) that hands
 * each request to the next node in turn: `service.url` is the proxy, and the nodes' `publicUrl` is
 * its origin (or the `publicUrl` asked for; `port` is the proxy's), so signed URLs point at it
 * (except with remote providers: remoteProvidersConfigured).
 * `dataDir` is the first node's; the second has a data directory of its own for its work files
 * (tmp/), holding a copy of the first's configuration, as on another machine. Files on disk are
 * shared as a volume would be: the second node uses the first's directory as its store. A test
 * inherently about one process (signals, a graceful stop, a node's own readiness or HTTP parser)
 * asks for `nodes: 1`, saying why.
 */
export async function startTestService(
  opts: Partial<StartServiceOptions> & { storage?: 'disk' | 's3'; nodes?: 1 | 2 } = {},
): Promise<TestService> {
  const { storage = TEST_STORAGE, nodes = TEST_NODES, ...options } = opts;
  if (nodes === 2 && !onPostgres) throw new Error('two nodes need the shared database of the PostgreSQL pass');
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'clipdesk-svc-')));
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 30));
  const database = options.database ?? (await testDatabaseFor(dataDir));
  const files = options.store
    ? { store: options.store, view: options.store, close: () => undefined }
    : await openTestStore(dataDir, storage);
  // Provider keys in the developer's environment must not reach tests: they never call a real provider.
  const nodeOptions = (dir: string, more: Partial<StartServiceOptions> = {}): StartServiceOptions => ({
    sweepIntervalMs: 0,
    providerEnv: {},
    ...options,
    ...(files.store ? { store: files.store } : {}),
    ...more,
    dataDir: dir,
    clock,
    ...(database !== undefined ? { database } : {}),
  });
  const started =
    nodes === 1
      ? startService(nodeOptions(dataDir)).then((service) => ({ service, workDirs: [dataDir] }))
      : startTwoNodes(dataDir, options, files.view, nodeOptions);
  const { service, workDirs } = await started.catch((error: unknown) => {
    files.close();
    throw error;
  });
  return {
    service,
    clock,
    dataDir,
    storage: files.view.kind,
    store: files.view,
    async storedKeys(prefix) {
      const keys: string[] = [];
      for await (const blob of files.view.list(prefix)) keys.push(blob.key);
      return keys.sort();
    },
    async leftovers() {
      const work: string[] = [];
      for (const dir of workDirs) work.push(...(await readdir(join(dir, 'tmp')).catch(() => [])));
      const parts = files.view.kind === 's3' ? (await testS3()).pendingMultipartUploads() : [];
      return [...work, ...parts.map((p) => `multipart upload ${p}`)];
    },
    async client(user, tier = 'pro', permissions) {
      const created = await service.createKey({ user, tier, permissions });
      return clientFor(service.url, created.key, created.id, user);
    },
    async stop() {
      await service.close();
      files.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Whether a service starts with remote providers it could route to (keys, fakes, adapters). Such
 * a service gets the proxy as its public URL only when the test asks for one: with a public URL the
 * service asks providers for webhooks and waits for them (polling once a minute as a safety net),
 * and the tests' fake providers deliver webhooks only when a test makes them. Without one, the
 * URLs in its answers name the node that answered.
 */
async function remoteProvidersConfigured(options: Partial<StartServiceOptions>, dataDir: string): Promise<boolean> {
  const envKeys = Object.values(PROVIDER_ENV_KEYS);
  return (
    (options.remoteProviders?.length ?? 0) > 0 ||
    Object.keys(options.providerAdapters ?? {}).length > 0 ||
    Object.values(options.providerKeys ?? {}).some((key) => key !== undefined) ||
    Object.keys(options.providerBaseUrls ?? {}).length > 0 ||
    envKeys.some((name) => (options.providerEnv ?? {})[name] !== undefined) ||
    // A key file the service refuses is for the node's start to report.
    Object.keys(await readKeyFile(dataDir).catch(() => ({}))).length > 0
  );
}

/**
 * Two nodes behind the round-robin proxy, as one RunningService. Members read or write the shared
 * database through the first node (any node would do); settings kept in a node's memory (provider
 * keys, base URLs, switches) go to both, as a deployment configures every node alike; per-process
 * instrumentation adds up both nodes. close() stops both nodes (in parallel, each with the grace
 * asked for), then the proxy, then removes the second node's own data directory.
 */
async function startTwoNodes(
  dataDir: string,
  options: Partial<StartServiceOptions>,
  files: BlobStore,
  nodeOptions: (dir: string, more?: Partial<StartServiceOptions>) => StartServiceOptions,
): Promise<{ service: RunningService; workDirs: string[] }> {
  const proxy = await startRoundRobin(options.port === undefined ? {} : { port: options.port });
  const secondDir = await mkdtemp(join(tmpdir(), 'clipdesk-svc-node2-'));
  const nodes: RunningService[] = [];
  try {
    await mkdir(dataDir, { recursive: true });
    for (const name of NODE_CONFIGURATION)
      await copyFile(join(dataDir, name), join(secondDir, name)).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    const publicUrl =
      options.publicUrl ?? ((await remoteProvidersConfigured(options, dataDir)) ? undefined : proxy.origin);
    const shared = { ...(publicUrl !== undefined ? { publicUrl } : {}), port: 0 };
    // One after the other: the first migrates the database and stores the signing secret, as the
    // first node of a deployment (or its `migrate` step) does.
    nodes.push(await startService(nodeOptions(dataDir, shared)));
    nodes.push(
      await startService(nodeOptions(secondDir, files.kind === 'disk' ? { ...shared, store: files } : shared)),
    );
  } catch (error) {
    await Promise.allSettled(nodes.map((n) => n.close()));
    await proxy.close();
    await rm(secondDir, { recursive: true, force: true });
    throw error;
  }
  proxy.route(nodes);
  const [first, second] = nodes as [RunningService, RunningService];
  const both = async (step: (node: RunningService) => Promise<void>) => {
    await step(first);
    await step(second);
  };
  let closing: Promise<void> | null = null;
  const service: RunningService = {
    url: `${proxy.origin}/v1`,
    host: '127.0.0.1',
    port: proxy.port,
    close(closeOptions) {
      closing ??= (async () => {
        const stopped = await Promise.allSettled([first.close(closeOptions), second.close(closeOptions)]);
        await proxy.close();
        await rm(secondDir, { recursive: true, force: true });
        for (const s of stopped) if (s.status === 'rejected') throw s.reason;
      })();
      return closing;
    },
    createKey: (o) => first.createKey(o),
    rotateWebhookSecret: (keyId) => first.rotateWebhookSecret(keyId),
    revokeKey: (id) => first.revokeKey(id),
    listKeys: (user) => first.listKeys(user),
    setTier: (user, tier) => first.setTier(user, tier),
    setLimits: (user, limits) => first.setLimits(user, limits),
    sweepRetention: () => first.sweepRetention(),
    stats: {
      running: (user, kind) => first.stats.running(user, kind) + second.stats.running(user, kind),
      // Each node's own highest, added: never less than the most that ran at once across both.
      maxConcurrent: (user, kind) => first.stats.maxConcurrent(user, kind) + second.stats.maxConcurrent(user, kind),
      snapshot() {
        const all = new Map<string, { user: string; kind: MediaKind; max: number }>();
        for (const seen of [...first.stats.snapshot(), ...second.stats.snapshot()]) {
          const key = `${seen.kind}\u0000${seen.user}`;
          const had = all.get(key);
          all.set(key, { ...seen, max: (had?.max ?? 0) + seen.max });
        }
        return [...all.values()];
      },
    },
    setProviderKey: (id, key) => both((node) => node.setProviderKey(id, key)),
    setProviderEnabled: (id, enabled) => both((node) => node.setProviderEnabled(id, enabled)),
    setProviderBaseUrl: (id, url) => both((node) => node.setProviderBaseUrl(id, url)),
    testProviderKey: (id, key) => first.testProviderKey(id, key),
    providerStatus: () => first.providerStatus(),
    // On the first node; the second loads the catalog the sync wrote to the database.
    syncCatalog: (options) => first.syncCatalog(options),
  };
  return { service, workDirs: [dataDir, secondDir] };
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

/**
 * A signed upload ticket for a PNG of `size` bytes (POST /media/upload), with its signed URL as
 * sent to any node of the service: `urlOn(serviceUrl)` keeps the path and signature, changes the origin.
 */
export async function pngUploadTicket(
  client: TestClient,
  filename: string,
  size: number,
): Promise<{ id: string; headers: Record<string, string>; urlOn: (serviceUrl: string) => string }> {
  const res = await client.call('POST', '/media/upload', { filename, mime: 'image/png', size });
  if (res.status !== 200) throw new Error(`the upload ticket answered ${res.status}: ${JSON.stringify(res.body)}`);
  const { id, uploadUrl, headers } = res.body.result as {
    id: string;
    uploadUrl: string;
    headers: Record<string, string>;
  };
  const url = new URL(uploadUrl);
  return { id, headers, urlOn: (serviceUrl) => `${new URL(serviceUrl).origin}${url.pathname}${url.search}` };
}
