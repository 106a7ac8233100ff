import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { PgBoss } from 'pg-boss';
import type { Logger } from '../logger.ts';

/**
 * The work queue of asynchronous generations on PostgreSQL (docs/service.md): a `generations` row plus a
 * pg-boss job whose data names it. Every node works the queue; the node whose worker holds the
 * job runs the generation, and pg-boss's job heartbeat is the lease: a node that dies stops
 * heartbeating, pg-boss's supervisor fails the job after `leaseSeconds`, and it is retried at once
 * on whichever node fetches it first. SQLite (one node, the embedded Local engine) has no queue:
 * generations run in the process that accepted them, as they always did.
 *
 * pg-boss is loaded only here, and only for a PostgreSQL database, so the Local engine does not
 * pay for it.
 */
export const GENERATION_QUEUE = 'clipdesk-generations';

/**
 * Synchronous requests' generations (sync-generation.ts) have a queue, and workers, of their own.
 * Such a request holds its account's concurrency slot while its job waits for a worker; were its
 * job behind asynchronous ones that hold every worker while they wait for that account's slots, no
 * job could move. Its workers never wait for a slot, so they always move.
 */
export const SYNC_GENERATION_QUEUE = 'clipdesk-generations-sync';
const QUEUES = [GENERATION_QUEUE, SYNC_GENERATION_QUEUE] as const;

/** pg-boss's tables live in a schema of their own, beside the service's (public) tables. */
export const QUEUE_SCHEMA = 'pgboss';

/** Default lease: a node silent this long (no heartbeat) loses its generations to another node. */
export const DEFAULT_LEASE_SECONDS = 30;

/** pg-boss refuses heartbeats under 10 s. */
export const MIN_LEASE_SECONDS = 10;

/** Generations one node runs at once, by default (`serve --generation-workers`). */
export const DEFAULT_GENERATION_WORKERS = 16;

export interface GenerationQueueOptions {
  url: string;
  /**
   * The address of the queue's LISTEN connection (new-job wake-ups), when `url` goes through a
   * pooler in transaction mode that keeps no session (`serve --listen-database`). Default: `url`.
   */
  listenUrl?: string;
  /** Seconds without a heartbeat after which another node takes a generation over. */
  leaseSeconds?: number;
  /** Generations this node runs at once, per queue (pg-boss workers); 0: none (an API-only node). */
  workers?: number;
  /** Install or update pg-boss's schema (false: `serve --no-migrate`, which refuses a missing one). */
  migrate?: boolean;
  logger: Logger;
}

/** A job's data: the generation it runs. */
interface JobData {
  generationId: string;
}

/** What a worker is handed: the generation, and the attempt (its lease on the row). */
export interface QueuedGeneration {
  generationId: string;
  /**
   * `JOB_ID/RETRY_COUNT@HOST:PID`: unique per attempt, written on the row as its lease owner (the
   * node's name is there for operators looking at a generation: which node runs it).
   */
  attempt: string;
  /** Aborted when pg-boss gives the attempt up (its heartbeat was refused). */
  signal: AbortSignal;
  /**
   * A synchronous request's (SYNC_GENERATION_QUEUE): admitted when the request was (its storage
   * reservation and concurrency slot, which the request holds while it waits, slot-handoff.ts), so
   * its run never waits for a slot.
   */
  synchronous: boolean;
}

/**
 * What a handler's rejection means to the queue: the generation was handed back (this node is
 * stopping) and another node should take it at once.
 */
export class HandedBack extends Error {
  constructor(id: string) {
    super(`generation ${id} handed back: this node is stopping`);
    this.name = 'HandedBack';
  }
}

export interface GenerationQueue {
  /**
   * Queues a stored generation (`synchronous`: a synchronous request's, on its own queue); a second
   * call for the same generation is a no-op (one job per generation).
   */
  enqueue(generationId: string, options?: { synchronous?: boolean }): Promise<void>;
  /** Starts this node's workers; `run` resolves when the generation has ended, or rejects with HandedBack. */
  work(run: (job: QueuedGeneration) => Promise<void>): Promise<void>;
  /** Stops fetching new jobs (a graceful stop begins); running handlers go on. */
  stopTaking(): Promise<void>;
  /** /readyz: the queue's tables answer. */
  check(): Promise<void>;
  /** After every handler has returned: stops pg-boss and closes its pool. */
  close(): Promise<void>;
  readonly leaseSeconds: number;
}

function queueOptions(leaseSeconds: number, name: string) {
  return {
    heartbeatSeconds: leaseSeconds,
    // The heartbeat is the lease; the expiry is only a bound on one attempt, past any provider's
    // timeout (default 900 s) and the pipeline after it.
    expireInSeconds: 6 * 3600,
    // A retry is a takeover (a dead or stopping node), never a failed generation: a generation that
    // fails ends its row `failed` and its job completes.
    retryLimit: 1000,
    retryDelay: 0,
    // A finished job only keeps the generation's job id taken; the row is the record.
    deleteAfterSeconds: 86_400,
    // New asynchronous jobs wake every node's workers (NOTIFY). A synchronous request's job is
    // announced to its own node only (enqueue wakes this node's worker), which runs it when it has a
    // free worker: its request is there, holding its slot, and learns of the end at once. Other
    // nodes find it at their next poll (2 s), as they find takeovers.
    notify: name !== SYNC_GENERATION_QUEUE,
  };
}

function bossOptions(url: string, leaseSeconds: number, migrate: boolean) {
  return {
    connectionString: url,
    schema: QUEUE_SCHEMA,
    application_name: 'clipdesk-service queue',
    // Workers, fetches and heartbeats; the service's own pool is separate.
    max: 4,
    migrate,
    createSchema: migrate,
    schedule: false,
    // A missed heartbeat is noticed at the next supervision of the queue (its monitor pass): a
    // quarter of the lease keeps a takeover within 1.25 leases.
    superviseIntervalSeconds: Math.max(1, Math.floor(leaseSeconds / 4)),
    monitorIntervalSeconds: Math.max(1, Math.floor(leaseSeconds / 4)),
    useListenNotify: true,
  };
}

/** A deterministic job id per generation: a second enqueue (a restart's sweep) finds the first. */
export function jobIdOf(generationId: string): string {
  const h = createHash('sha256').update(`clipdesk generation ${generationId}`).digest('hex');
  // A UUID (version 8, RFC 9562's custom layout), as pg-boss's id column takes.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.slice(16, 17), 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function loadBoss(): Promise<typeof PgBoss> {
  return (await import('pg-boss')).PgBoss;
}

/**
 * pg-boss's own database adapter (its pool, transactions and statements as they are), whose LISTEN
 * connection goes to `listenUrl`: through a pooler in transaction mode a LISTEN hears nothing, and
 * pg-boss's heartbeat on it (pg_listening_channels) would land on whichever server connection is
 * free. pg-boss has no setting for a second address; its adapter is a class of its package
 * (`dist/db.js`, the one it builds from the same options when given none), so a pg-boss upgrade
 * that moves it fails here, at start, loudly.
 */
async function queueDb(options: ReturnType<typeof bossOptions>, listenUrl: string) {
  const { default: Db } = await import('pg-boss/dist/db.js');
  const listener = new Db({ ...options, connectionString: listenUrl, max: 1 });
  class ListeningElsewhere extends Db {
    override async open(): Promise<void> {
      await super.open();
      // Its pool is never used (listen() opens a client of its own); open() only allows listen().
      await listener.open();
    }
    override async close(): Promise<void> {
      await listener.close();
      await super.close();
    }
    override listen(...args: Parameters<InstanceType<typeof Db>['listen']>) {
      return listener.listen(...args);
    }
  }
  const db = new ListeningElsewhere(options);
  // pg-boss reports its adapter's errors (a lost LISTEN connection among them) as its own.
  listener.on('error', (error: unknown) => db.emit('error', error));
  return db;
}

/**
 * `clipdesk-service migrate` on PostgreSQL: installs or updates pg-boss's schema (it takes its own
 * advisory lock, so two nodes at once are safe) and creates the generations queue.
 */
export async function migrateGenerationQueue(url: string, leaseSeconds = DEFAULT_LEASE_SECONDS): Promise<void> {
  const Boss = await loadBoss();
  const boss = new Boss({ ...bossOptions(url, leaseSeconds, true), supervise: false, useListenNotify: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    await ensureQueue(boss, leaseSeconds);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

async function ensureQueue(boss: PgBoss, leaseSeconds: number): Promise<void> {
  for (const name of QUEUES) {
    const existing = await boss.getQueue(name);
    const wanted = queueOptions(leaseSeconds, name);
    if (!existing) await boss.createQueue(name, wanted);
    else if (existing.heartbeatSeconds !== leaseSeconds || existing.notify !== wanted.notify) {
      // The lease is a node setting stored on the queue: the last node started with another one sets it.
      await boss.updateQueue(name, { heartbeatSeconds: leaseSeconds, notify: wanted.notify });
    }
  }
}

export async function openGenerationQueue(options: GenerationQueueOptions): Promise<GenerationQueue> {
  const leaseSeconds = Math.max(MIN_LEASE_SECONDS, Math.floor(options.leaseSeconds ?? DEFAULT_LEASE_SECONDS));
  // 0: a node that accepts and answers requests but runs no generation (the other nodes do).
  const workers = Math.max(0, Math.floor(options.workers ?? DEFAULT_GENERATION_WORKERS));
  const migrate = options.migrate !== false;
  const Boss = await loadBoss();
  const base = bossOptions(options.url, leaseSeconds, migrate);
  const boss = new Boss(
    options.listenUrl === undefined || options.listenUrl === options.url
      ? base
      : { ...base, db: await queueDb(base, options.listenUrl) },
  );
  const { logger } = options;
  boss.on('error', (error) => logger.warn(`generation queue: ${error.message}`));
  if (!migrate) {
    // `serve --no-migrate` changes nothing: a database whose queue schema is missing is refused.
    const probe = new Boss({
      ...bossOptions(options.url, leaseSeconds, false),
      supervise: false,
      useListenNotify: false,
    });
    probe.on('error', () => undefined);
    let installed: boolean;
    try {
      await probe.start();
      installed = await probe.isInstalled();
    } catch {
      installed = false;
    } finally {
      await probe.stop({ graceful: false, close: true }).catch(() => undefined);
    }
    if (!installed)
      throw new Error(
        `the generation queue (schema ${QUEUE_SCHEMA}) is not installed in this database: run clipdesk-service migrate`,
      );
  }
  await boss.start();
  try {
    if (migrate) await ensureQueue(boss, leaseSeconds);
    else
      for (const name of QUEUES)
        if (!(await boss.getQueue(name)))
          throw new Error(`the generation queue ${name} is missing from this database: run clipdesk-service migrate`);
  } catch (error) {
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    throw error;
  }
  const workerIds = new Map<string, string>();
  const node = `${hostname()}:${process.pid}`;
  return {
    leaseSeconds,
    async enqueue(generationId, options = {}) {
      const name = options.synchronous === true ? SYNC_GENERATION_QUEUE : GENERATION_QUEUE;
      const data: JobData = { generationId };
      await boss.send(name, data, { id: jobIdOf(generationId) });
      // This node's own workers are woken too (NOTIFY wakes the others), so a generation accepted
      // here starts without waiting for a poll.
      const workerId = workerIds.get(name);
      if (workerId !== undefined) boss.notifyWorker(workerId);
    },
    async work(run) {
      if (workers === 0) return;
      for (const name of QUEUES) {
        const workerId = await boss.work<JobData>(
          name,
          {
            localConcurrency: workers,
            batchSize: 1,
            // Retries (takeovers, hand-backs) are not announced by NOTIFY: polled this often.
            pollingIntervalSeconds: 2,
            notifyPollingIntervalSeconds: 2,
          },
          async ([job]) => {
            if (!job) return;
            await run({
              generationId: job.data.generationId,
              attempt: `${job.id}/${job.retryCount}@${node}`,
              signal: job.signal,
              synchronous: name === SYNC_GENERATION_QUEUE,
            });
          },
        );
        workerIds.set(name, workerId);
      }
    },
    async stopTaking() {
      for (const name of QUEUES) await boss.offWork(name, { wait: false });
    },
    async check() {
      await boss.getDb().executeSql(`SELECT 1 FROM ${QUEUE_SCHEMA}.version LIMIT 1`);
    },
    async close() {
      await boss.stop({ graceful: true, close: true, timeout: 10_000 });
    },
  };
}
