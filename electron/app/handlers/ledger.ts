import {
  chargedItemsOf,
  deliveredSince,
  itemsCharge,
  RecoverError,
  reconcile,
  recoverJob,
  unansweredJobs,
  utcDay,
  type ReconcileInput,
} from '../../core/ledger/index.ts';
import { isFinished } from '../../core/jobs/index.ts';
import type { Reconciliation } from '../../../shared/ipc/schemas/ledger.ts';
import { ipcError } from '../errors.ts';
import type { EventBus } from '../events.ts';
import type { DomainHandlers, ServiceSession, SessionGetter } from '../types.ts';

/**
 * The ledger against `GET /usage` now (a service that cannot be asked leaves the ledger's own
 * gaps). Where a day shows more charged than the ledger holds, the library is synced, the jobs of
 * that day that ended without an answer are looked for in `/media` (only one found there is named
 * as charged), and the items no job or charge of this app claims are other clients' of the same
 * key (the CLI): they explain the gap and are never blamed on the app.
 */
async function reconcileNow(s: ServiceSession, signal: AbortSignal | undefined): Promise<Reconciliation> {
  const usage = await s.api.getUsage({ ...(signal ? { signal } : {}) }).catch(() => null);
  // Items saved since their job's download failed (from the Library, by the retention guard) are delivered.
  for (const jobId of deliveredSince(s.ledger.all(s.profileId), (id) => Boolean(s.library.get(id)?.downloadedPath)))
    s.ledger.markDelivered(jobId);
  const input: ReconcileInput = {
    charges: s.ledger.all(s.profileId),
    usage,
    jobs: s.queue.list(),
    currentKey: await s.keyLast4(),
    appKeys: s.ledger.keys(s.profileId),
  };
  const first = reconcile(input);
  const gapDays = new Set(first.differences.map((d) => d.day));
  if (gapDays.size === 0) return first;
  await s.sync.sync(signal).catch(() => undefined);
  const candidates = unansweredJobs(input.jobs, input.charges).filter((j) => gapDays.has(utcDay(j.submittedAt!)));
  const found = new Map<string, { itemIds: string[]; price: number | null }>();
  const claimed = new Set<string>();
  for (const job of candidates) {
    const items = await chargedItemsOf(s, job, { alsoClaimed: claimed, ...(signal ? { signal } : {}) }).catch(() => []);
    if (items.length === 0) continue;
    for (const i of items) claimed.add(i.id);
    found.set(job.id, { itemIds: items.map((i) => i.id), price: itemsCharge(items) });
  }
  for (const job of input.jobs) for (const i of job.result?.items ?? []) claimed.add(i.id);
  for (const c of input.charges) for (const id of c.itemIds) claimed.add(id);
  const othersItems = libraryItemsOn(s, gapDays).filter((i) => !claimed.has(i.id));
  return reconcile({ ...input, found, othersItems });
}

/** The library's items (after a sync: what `/media` lists) created on these UTC days, newest first. */
function libraryItemsOn(
  s: ServiceSession,
  days: ReadonlySet<string>,
): Array<{ id: string; createdAt: string; price?: number }> {
  const earliest = [...days].sort()[0]!;
  const out: Array<{ id: string; createdAt: string; price?: number }> = [];
  let cursor: string | null = null;
  for (;;) {
    const page = s.library.query({ sort: 'newest', includeLost: true, limit: 500, cursor });
    for (const { item } of page.items) {
      if (days.has(utcDay(item.createdAt)))
        out.push({
          id: item.id,
          createdAt: item.createdAt,
          ...(item.price === undefined ? {} : { price: item.price }),
        });
    }
    const oldest = page.items.at(-1);
    if (!page.nextCursor || !oldest || utcDay(oldest.item.createdAt) < earliest) return out;
    cursor = page.nextCursor;
  }
}

/** Resolves when the job has finished (its recovery downloaded or failed), or after `ms`. */
function settled(s: ServiceSession, bus: EventBus, jobId: string, ms: number): Promise<void> {
  const done = (): boolean => {
    const job = s.queue.get(jobId);
    return !job || isFinished(job.state);
  };
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    const stop = bus.on((e) => {
      if (e.type === 'job.updated' && e.job.id === jobId && done()) finish();
    });
    function finish(): void {
      clearTimeout(timer);
      stop();
      resolve();
    }
  });
}

/** Settings → Usage: reconciliation and "Recover" (docs/workflows.md). */
export function ledgerHandlers(
  session: SessionGetter,
  bus: EventBus,
): Pick<DomainHandlers<'usage'>, 'reconcile' | 'recover' | 'spend'> {
  return {
    spend: async () => {
      const s = await session();
      const day = utcDay(Date.now());
      return {
        day,
        today: s.ledger.spent(s.profileId, day, day),
        month: s.ledger.spent(s.profileId, `${day.slice(0, 7)}-01`, day),
      };
    },
    reconcile: async (_input, ctx) => reconcileNow(await session(), ctx.signal),
    recover: async ({ jobId }, ctx) => {
      const s = await session();
      try {
        const job = await recoverJob(
          {
            queue: s.queue,
            ledger: s.ledger,
            profileId: s.profileId,
            api: s.api,
            downloads: s.downloads,
            library: s.library,
          },
          jobId,
          ctx.signal,
        );
        // The answer shows the outcome: the recovered download is awaited (the queue runs it).
        // A paused queue runs it on Resume: the answer then shows it as not yet delivered.
        if (job && !s.queue.stats().paused) await settled(s, bus, job.id, 120_000);
      } catch (error) {
        if (error instanceof RecoverError) throw ipcError('not_found', error.message);
        throw error;
      }
      return reconcileNow(s, ctx.signal);
    },
  };
}
