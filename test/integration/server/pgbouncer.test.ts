import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../server/cli/program.ts';
import type { ServiceContext } from '../../../server/context.ts';
import { PostgresSql } from '../../../server/storage/sql/postgres.ts';
import { startPgBouncer, pgbouncerUnavailable } from '../../support/pgbouncer.ts';
import type { PrivatePgBouncer } from '../../support/pgbouncer.ts';
import { freePort, startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { acmeMotionSettings, WEBHOOK_ONLY_TIMINGS } from '../../support/remote/acme-adapter.ts';
import { acmeSignature, deliverWebhook, startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { clientFor, onPostgres, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';
import { untilTrue, within } from '../../support/until.ts';

/**
 * The nodes behind PgBouncer 1.18 in transaction mode (docs/scaling.md's recipe at ~100×), as the
 * machine's Debian package runs it: their pool goes through it, and `--listen-database` gives
 * their LISTEN connections (provider webhooks' relay, the queue's wake-ups) and their liveness
 * (job-claims.ts) PostgreSQL's own address. Prepared statements do not follow a client across
 * transactions there (1.18 has no max_prepared_statements): the nodes notice and stop naming them.
 * The PostgreSQL pass runs it (a cluster and a PgBouncer of its own); skipped where PgBouncer is
 * not installed (`.ci/run` installs it).
 */
const skip = !onPostgres ? 'the PostgreSQL pass runs it (npm run test:pg)' : pgbouncerUnavailable();
if (onPostgres && skip !== null) console.warn(`pgbouncer.test.ts is skipped: ${skip}`);

// Only a webhook or its relay can finish a job within the test: the safety poll is ten minutes away.
const TIMINGS = WEBHOOK_ONLY_TIMINGS;
const REMOTE = { model: 'clipdesk/motion', size: '360p', duration: 2, routing: 'cheapest', prompt: 'a paper boat' };
const PROCEDURAL = { model: 'clipdesk/motion', size: '360p', duration: 2, provider: 'swift', prompt: 'a lighthouse' };

let cluster: PrivatePostgres;
let bouncer: PrivatePgBouncer;
let media: SampleMedia;
let fake: AcmeFake | undefined;
let made = 0;
const started: TestService[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  if (skip !== null) return;
  cluster = await startPostgres();
  bouncer = await startPgBouncer(cluster);
  media = await sampleMedia();
}, 120_000);
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  await fake?.close();
  fake = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await bouncer?.stop();
  await cluster?.stop();
});

/** A new database: its URL through PgBouncer and PostgreSQL's own. */
async function database(): Promise<{ pooled: string; direct: string }> {
  const name = `bouncer_${process.pid}_${++made}`;
  const direct = await cluster.createDatabase(name);
  return { pooled: bouncer.urlFor(name), direct };
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l) }, { onStop: () => undefined });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

interface Node {
  service: TestService;
  ctx: ServiceContext;
  log: string[];
}

/**
 * A node on `db.pooled`, its LISTEN connections on `listen` (absent: the pooled URL, as before
 * --listen-database); the first started, or another on its files. `runs: false`: no generation
 * workers (the other node runs them).
 */
async function node(
  db: { pooled: string },
  options: { listen?: string; port?: number; publicUrl: string; runs?: false },
): Promise<Node> {
  const first = started[0];
  let ctx: ServiceContext | undefined;
  const log: string[] = [];
  const more: Parameters<typeof startTestService>[0] = {
    ...acmeMotionSettings(fake!.key, fake!.baseUrl),
    remoteTimings: TIMINGS,
    database: db.pooled,
    ...(options.listen !== undefined ? { listenDatabase: options.listen } : {}),
    // `migrate` ran through PgBouncer first, as a deployment's step.
    migrate: false,
    publicUrl: options.publicUrl,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.runs === false ? { generationQueue: { workers: 0 } } : {}),
    logger: { info: (m) => log.push(m), warn: (m) => log.push(`warning: ${m}`), error: (m) => log.push(`error: ${m}`) },
    onContext: (c) => {
      ctx = c;
    },
    nodes: 1,
    ...(first ? { store: first.store, clock: first.clock } : {}),
  };
  const service = await startTestService(more);
  started.push(service);
  return { service, ctx: ctx!, log };
}

/** `migrate` and `keys create` through PgBouncer, as an operator runs them: the key. */
async function prepare(db: { pooled: string }): Promise<string> {
  const data = await mkdtemp(join(tmpdir(), 'clipdesk-bouncer-cli-'));
  dirs.push(data);
  const migrated = await cli(['migrate', '--data', data, '--database', db.pooled]);
  expect(migrated.code, migrated.err).toBe(0);
  const created = await cli(['keys', 'create', '--user', 'pooled', '--json', '--data', data, '--database', db.pooled]);
  expect(created.code, created.err).toBe(0);
  return (JSON.parse(created.out) as { key: string }).key;
}

/** Sessions of `name` PostgreSQL shows, read through PgBouncer as job-claims.ts reads them. */
async function sessionsNamed(db: { pooled: string }, name: string): Promise<number> {
  const sql = new PostgresSql(db.pooled, 'through PgBouncer');
  try {
    const row = await sql.get<{ n: number }>(
      'SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = ?',
      name,
    );
    return row?.n ?? -1;
  } finally {
    await sql.close();
  }
}

/** Backend pids of LISTEN connections (the relay's and pg-boss's), and those PgBouncer holds. */
async function listeners(db: { direct: string }): Promise<{ listening: number[]; pooled: Set<number> }> {
  const direct = new pg.Client({ connectionString: db.direct });
  const admin = new pg.Client({ connectionString: bouncer.adminUrl });
  await direct.connect();
  await admin.connect();
  try {
    const listening = await direct.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND (query LIKE 'LISTEN%' OR query LIKE '%pg_listening_channels%')`,
    );
    const servers = await admin.query<{ remote_pid: string }>('SHOW SERVERS');
    return {
      listening: listening.rows.map((r) => r.pid),
      pooled: new Set(servers.rows.map((r) => Number(r.remote_pid))),
    };
  } finally {
    await direct.end();
    await admin.end();
  }
}

describe.skipIf(skip !== null)('behind PgBouncer 1.18 in transaction mode', () => {
  it('statements stop being named, without an error: at the start (the probe) or at the first that meets the pooler', async () => {
    const db = await database();
    // The probe: a pool through PgBouncer notices it before any work; PostgreSQL's own keeps naming.
    const probed = new PostgresSql(db.pooled, 'through PgBouncer');
    const straight = new PostgresSql(db.direct, 'PostgreSQL itself');
    try {
      await probed.checkStatementPooler();
      await straight.checkStatementPooler();
      expect([probed.namesStatements, straight.namesStatements]).toEqual([false, true]);
    } finally {
      await probed.close();
      await straight.close();
    }
    // Without the probe: statements from ten connections at once through PgBouncer. Some meet a
    // server connection that never prepared theirs (26000), or one another connection prepared them
    // on (42P05): each is run again unnamed, and the pool names none from then on.
    const sql = new PostgresSql(db.pooled, 'through PgBouncer');
    try {
      const texts = ['SELECT ? + 1 AS n /* a */', 'SELECT ? + 2 AS n /* b */', 'SELECT ? + 3 AS n /* c */'];
      for (let round = 0; round < 20; round++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => sql.get<{ n: number }>(texts[i % 3]!, round * 10 + i)),
        );
        expect(answers.map((a) => a?.n)).toEqual(Array.from({ length: 10 }, (_, i) => round * 10 + i + 1 + (i % 3)));
      }
      expect(sql.namesStatements).toBe(false);
      // Transactions go on too (unnamed now).
      expect(await sql.transaction(async (tx) => (await tx.get<{ n: number }>(texts[0]!, 41))?.n)).toBe(42);
    } finally {
      await sql.close();
    }
  });

  it('two nodes: migrate, keys, generations and listings through it; a provider webhook relayed over --listen-database at once', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    const db = await database();
    const key = await prepare(db);
    // The provider's webhooks go to B; A runs the generations (B has no workers).
    const portB = await freePort();
    const publicUrl = `http://127.0.0.1:${portB}`;
    const a = await node(db, { listen: db.direct, publicUrl });
    const b = await node(db, { listen: db.direct, port: portB, publicUrl, runs: false });
    for (const n of [a, b]) {
      expect(n.log.join('\n'), JSON.stringify(n.log)).toContain('statements run unnamed');
      expect(n.log.join('\n')).not.toContain('goes through a pooler');
    }

    // A synchronous and an asynchronous generation (procedural), accepted on either node.
    const onA = clientFor(a.service.service.url, key);
    const onB = clientFor(b.service.service.url, key);
    const sync = await onB.call('POST', '/videos/generations', PROCEDURAL);
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    const accepted = await onB.call(
      'POST',
      '/images/generations',
      { model: 'clipdesk/still', prompt: 'a pebble', size: '256x256', provider: 'swift' },
      { prefer: 'respond-async' },
    );
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const id = (accepted.body as { result: { id: string } }).result.id;
    let status = '';
    await untilTrue('the asynchronous generation', async () => {
      const got = await onA.call('GET', `/generations/${id}`);
      expect(got.status).toBe(200);
      status = (got.body as { result: { status: string } }).result.status;
      return status === 'succeeded' || status === 'failed';
    });
    expect(status).toBe('succeeded');
    const listed = await onA.call('GET', '/media?limit=10');
    expect(listed.status).toBe(200);
    expect((listed.body as { result: { total: number } }).result.total).toBe(2);

    // Each node's LISTEN connections (the relay's, pg-boss's) are PostgreSQL's own sessions, not
    // PgBouncer's server connections; and each node's id shows in pg_stat_activity read through
    // PgBouncer, so the liveness check of job-claims.ts works from the pool.
    const seen = await listeners(db);
    expect(seen.listening.length).toBeGreaterThanOrEqual(4);
    expect(seen.listening.filter((pid) => seen.pooled.has(pid))).toEqual([]);
    for (const n of [a, b]) expect(await sessionsNamed(db, n.ctx.remote.jobClaims!.node)).toBe(1);

    // A provider job waits on A; its webhook lands on B, which relays it: A acts long before its safety poll.
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    const pending = onA.call('POST', '/videos/generations', REMOTE);
    await untilTrue('the job at the provider', () => fake!.jobs.has('job_1'));
    await new Promise((r) => setTimeout(r, 300));
    const polls = () => fake!.requests.filter((r) => r.method === 'GET' && r.path === '/v1/jobs/job_1');
    expect(polls()).toHaveLength(0);
    expect(await deliverWebhook(fake, 'job_1', 'succeeded')).toBe(200);
    const res = await within(30_000, pending);
    expect(res === 'still waiting' ? res : [res.status, res.body.stats.providerSlug]).toEqual([200, 'acme']);
    expect(polls()).toHaveLength(1);
    expect(bouncer.log()).not.toMatch(/ERROR|FATAL/);
  });

  it('without --listen-database the relay hears nothing through it, and the nodes say so', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    const db = await database();
    const key = await prepare(db);
    const portB = await freePort();
    const publicUrl = `http://127.0.0.1:${portB}`;
    const a = await node(db, { publicUrl });
    const b = await node(db, { port: portB, publicUrl, runs: false });
    for (const n of [a, b]) {
      expect(n.log.join('\n')).toContain('goes through a pooler');
      // The start's check finds PgBouncer among the other node's traffic too (its LISTENs, its queue's polls).
      expect(n.log.join('\n'), JSON.stringify(n.log)).toContain('statements run unnamed');
    }
    // No node's id on a server connection PgBouncer hands around: claims then hold until their lease lapses.
    for (const n of [a, b]) expect(await sessionsNamed(db, n.ctx.remote.jobClaims!.node)).toBe(0);

    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    const pending = clientFor(a.service.service.url, key).call('POST', '/videos/generations', REMOTE);
    await untilTrue('the job at the provider', () => fake!.jobs.has('job_1'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await deliverWebhook(fake, 'job_1', 'succeeded')).toBe(200);
    // B verified and relayed it; A's LISTEN, through PgBouncer, heard nothing.
    expect(await within(3_000, pending)).toBe('still waiting');
    const polls = fake.requests.filter((r) => r.method === 'GET' && r.path === '/v1/jobs/job_1');
    expect(polls).toHaveLength(0);
    // Delivered to A itself it acts at once: only the relay was missing.
    const body = JSON.stringify({ id: 'job_1', status: 'succeeded', outputs: [`${fake.baseUrl}/files/clip.mp4`] });
    const toA = await fetch(`${a.service.service.url}/provider-webhooks/luma`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-acme-signature': acmeSignature(fake.key, body) },
      body,
    });
    expect(toA.status).toBe(200);
    const res = await within(30_000, pending);
    expect(res === 'still waiting' ? res : res.status).toBe(200);
  });
});
