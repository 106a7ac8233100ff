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
  /** Last 4 of the key the app uses now (the ledger knows the ones it used before). */
  currentKey: string | null;
}

/**
 * The ledger against `/usage`. Pure.
 * - total: what delivered jobs were charged, so it equals the sum of the finished jobs;
 * - charged but not delivered: the ledger's charges whose items were never saved (the job failed
 *   or was stopped after the service answered), and, per key and UTC day, what `/usage` charged
 *   beyond the ledger, with the jobs of that day that ended without a result;
 * - other keys: charges to keys of the account the app never used (not mixed into the total).
 */
export function reconcile({ charges, usage, jobs, currentKey }: ReconcileInput): Reconciliation {
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

  const ours = new Set(charges.flatMap((c) => (c.key ? [c.key] : [])));
  if (currentKey) ours.add(currentKey);
  const keys = usage?.usage?.cost?.byKey ?? [];
  const perDay = keys.length > 0 && keys.every((k) => typeof k.last4 === 'string' && Array.isArray(k.days));
  const differences: Reconciliation['differences'] = [];
  let otherKeys = 0;
  if (perDay) {
    const ledgerDay = new Map<string, number>();
    for (const c of charges) {
      const at = `${c.key ?? ''}|${c.day}`;
      ledgerDay.set(at, (ledgerDay.get(at) ?? 0) + c.price);
    }
    const serviceDay = new Map<string, number>();
    for (const k of keys) {
      if (!ours.has(k.last4!)) {
        otherKeys += k.cost;
        continue;
      }
      for (const d of k.days!) {
        const at = `${k.last4!}|${d.day}`;
        serviceDay.set(at, (serviceDay.get(at) ?? 0) + d.cost);
      }
    }
    for (const [at, service] of serviceDay) {
      const ledger = ledgerDay.get(at) ?? 0;
      if (service - ledger <= TOLERANCE) continue;
      const [key, day] = at.split('|') as [string, string];
      differences.push({ key, day, service: roundUsd(service), ledger: roundUsd(ledger) });
    }
    differences.sort((a, b) => a.day.localeCompare(b.day));
    const charged = new Set(charges.map((c) => c.jobId));
    const gapDays = new Set(differences.map((d) => d.day));
    for (const job of jobs) {
      if (charged.has(job.id) || job.result || (job.state !== 'failed' && job.state !== 'canceled')) continue;
      // Only jobs that reached the service can have been charged.
      if (job.submittedAt === null || !gapDays.has(utcDay(job.submittedAt))) continue;
      listed.push({
        jobId: job.id,
        prompt: job.request.prompt,
        state: job.state,
        day: utcDay(job.submittedAt),
        price: null,
        itemIds: [],
        reason: 'response',
      });
    }
  }
  const undelivered = listed.reduce((n, j) => n + (j.price ?? 0), 0);
  const beyond = differences.reduce((n, d) => n + d.service - d.ledger, 0);
  return {
    total,
    notDelivered: roundUsd(undelivered + beyond),
    jobs: listed,
    differences,
    otherKeys: roundUsd(otherKeys),
    perDay,
  };
}
