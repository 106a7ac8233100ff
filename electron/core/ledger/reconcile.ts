import type { Usage } from '../../../shared/api/index.ts';
import type { ChargedNotDelivered, Reconciliation } from '../../../shared/ipc/schemas/ledger.ts';
import type { Job } from '../jobs/index.ts';
import type { Charge } from './ledger.ts';
import { roundUsd, utcDay } from './ledger.ts';

/** Below a hundredth of a cent, a difference is rounding, not a charge. */
const TOLERANCE = 0.00005;

export interface ReconcileInput {
  /** The profile's charges (ledger.all). */
  charges: readonly Charge[];
  /** `GET /usage`'s result; null when the service could not be asked. */
  usage: Usage | null;
  /** The queue's jobs (removed ones are gone from it). */
  jobs: readonly Job[];
  /** Last 4 of the key the app uses now. */
  currentKey: string | null;
  /** Every key the app submitted or was charged with before (ledger.keys): all of them are the app's. */
  appKeys?: readonly string[];
  /**
   * The service's record of jobs that ended without a result: the items `/media` holds for them
   * (`serviceRecordOf`). Only a job found here is named as charged: a day's gap alone names none.
   */
  found?: ReadonlyMap<string, { itemIds: string[]; price: number | null }>;
  /**
   * Items the service holds for the account (the library after a sync) that no job or charge of
   * this app claims: other clients of the same key made them (the CLI, a script). They explain a
   * day's gap; they are never "not delivered" by this app.
   */
  othersItems?: ReadonlyArray<{ id: string; createdAt: string; price?: number | undefined }>;
}

/**
 * Charges the ledger holds as not delivered whose items are all saved now (`saved`: the library
 * after a sync, an item downloaded from the Library or by the retention guard): delivered after
 * all, never "charged but not delivered".
 */
export function deliveredSince(charges: readonly Charge[], saved: (itemId: string) => boolean): string[] {
  return charges
    .filter((c) => !c.delivered && c.itemIds.length > 0 && c.itemIds.every((id) => saved(id)))
    .map((c) => c.jobId);
}

/** Failed or canceled jobs that reached the service and never got its answer: those a day's gap may concern. */
export function unansweredJobs(jobs: readonly Job[], charges: readonly Charge[]): Job[] {
  const charged = new Set(charges.map((c) => c.jobId));
  return jobs.filter(
    (job) =>
      !charged.has(job.id) &&
      !job.result &&
      (job.state === 'failed' || job.state === 'canceled') &&
      // Only jobs that reached the service can have been charged.
      job.submittedAt !== null,
  );
}

type DayGap = Omit<Reconciliation['differences'][number], 'otherClients' | 'unexplained'>;

/**
 * Each day's gap, explained in order: this app's jobs the service finished after the app gave up
 * (`response`), then what other clients of the app's keys made that day (`othersItems`); the rest
 * is `unexplained` (items deleted since, or another client's work already gone from /media).
 */
function explainGaps(
  gaps: readonly DayGap[],
  listed: readonly ChargedNotDelivered[],
  othersItems: NonNullable<ReconcileInput['othersItems']>,
): Reconciliation['differences'] {
  return gaps.map((gap) => {
    const ours = listed
      .filter((j) => j.reason === 'response' && j.day === gap.day)
      .reduce((n, j) => n + (j.price ?? 0), 0);
    const theirs = othersItems.filter((i) => utcDay(i.createdAt) === gap.day).reduce((n, i) => n + (i.price ?? 0), 0);
    const remainder = Math.max(0, gap.service - gap.ledger - ours);
    const otherClients = Math.min(remainder, theirs);
    const unexplained = remainder - otherClients;
    return {
      ...gap,
      otherClients: roundUsd(otherClients),
      unexplained: unexplained <= TOLERANCE ? 0 : roundUsd(unexplained),
    };
  });
}

/**
 * The ledger against `/usage`. Pure.
 * - total: what delivered jobs were charged, so it equals the sum of the finished jobs;
 * - charged but not delivered: only jobs this app submitted: the ledger's charges whose items were
 *   never saved (the job failed or was stopped after the service answered), and the jobs that
 *   ended without an answer whose items the service's records show (`found`);
 * - differences: per UTC day over all the app's keys, what `/usage` charged beyond the ledger,
 *   explained by those jobs and by items other clients of the same keys made (`othersItems`),
 *   never counted as not delivered. Per day and not per key: the app's key changes (a Local engine
 *   without a keychain makes one per run) while a job runs, and a charge is the submitting key's;
 * - other keys: charges to keys of the account the app never used (not mixed into the total).
 */
export function reconcile({
  charges,
  usage,
  jobs,
  currentKey,
  appKeys = [],
  found,
  othersItems = [],
}: ReconcileInput): Reconciliation {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const total = roundUsd(charges.filter((c) => c.delivered).reduce((n, c) => n + c.price, 0));
  const listed: ChargedNotDelivered[] = [];
  for (const c of charges) {
    if (c.delivered) continue;
    const job = byId.get(c.jobId);
    // Still queued for its download or downloading: not a gap yet.
    if (job && job.state !== 'failed' && job.state !== 'canceled') continue;
    listed.push({
      jobId: c.jobId,
      prompt: job?.request.prompt ?? '',
      state: job?.state ?? 'removed',
      day: c.day,
      price: c.price,
      itemIds: c.itemIds,
      reason: 'download',
    });
  }

  const ours = new Set([...appKeys, ...charges.flatMap((c) => (c.key ? [c.key] : []))]);
  if (currentKey) ours.add(currentKey);
  const keys = usage?.usage?.cost?.byKey ?? [];
  const perDay = keys.length > 0 && keys.every((k) => typeof k.last4 === 'string' && Array.isArray(k.days));
  const differences: Reconciliation['differences'] = [];
  const gaps: DayGap[] = [];
  let otherKeys = 0;
  if (perDay) {
    const ledgerDay = new Map<string, number>();
    for (const c of charges) ledgerDay.set(c.day, (ledgerDay.get(c.day) ?? 0) + c.price);
    const serviceDay = new Map<string, { cost: number; keys: Set<string> }>();
    for (const k of keys) {
      if (!ours.has(k.last4!)) {
        otherKeys += k.cost;
        continue;
      }
      for (const d of k.days!) {
        const day = serviceDay.get(d.day) ?? { cost: 0, keys: new Set<string>() };
        day.cost += d.cost;
        if (d.cost > 0) day.keys.add(k.last4!);
        serviceDay.set(d.day, day);
      }
    }
    for (const [day, service] of serviceDay) {
      const ledger = ledgerDay.get(day) ?? 0;
      if (service.cost - ledger <= TOLERANCE) continue;
      // The key, where one key of the app was charged that day; null where several were.
      const key = service.keys.size === 1 ? [...service.keys][0]! : null;
      gaps.push({ key, day, service: roundUsd(service.cost), ledger: roundUsd(ledger) });
    }
    gaps.sort((a, b) => a.day.localeCompare(b.day));
    const gapDays = new Set(gaps.map((d) => d.day));
    for (const job of unansweredJobs(jobs, charges)) {
      const record = found?.get(job.id);
      if (!record || !gapDays.has(utcDay(job.submittedAt!))) continue;
      listed.push({
        jobId: job.id,
        prompt: job.request.prompt,
        state: job.state,
        day: utcDay(job.submittedAt!),
        price: record.price,
        itemIds: record.itemIds,
        reason: 'response',
      });
    }
    differences.push(...explainGaps(gaps, listed, othersItems));
  }
  // Only this app's jobs are "not delivered": a charged download that did not finish, and a job the
  // service finished after the app gave up on it. What is left of a day's gap is not blamed on it.
  const undelivered = listed.reduce((n, j) => n + (j.price ?? 0), 0);
  const otherClients = differences.reduce((n, d) => n + d.otherClients, 0);
  return {
    total,
    notDelivered: roundUsd(undelivered),
    jobs: listed,
    differences,
    otherKeys: roundUsd(otherKeys),
    otherClients: roundUsd(otherClients),
    perDay,
  };
}
