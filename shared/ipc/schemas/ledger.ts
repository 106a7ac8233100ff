import { z } from 'zod';

/**
 * One job the service charged and the app did not deliver (Settings → Usage; docs/workflows.md, "The ledger, reconciliation and budgets").
 * - `download`: the app has the charge and the items, but saving them failed or was stopped.
 * - `response`: `/usage` shows more charged that day than the ledger holds, and this job of that
 *   day ended without a result while `/media` holds its items: the service finished it after the
 *   app gave up on it. A job without such a record of the service's is never listed.
 */
export const ChargedNotDelivered = z.object({
  jobId: z.string(),
  prompt: z.string(),
  /** The job's state, or `removed` when it has left the queue. */
  state: z.string(),
  /** UTC day, YYYY-MM-DD. */
  day: z.string(),
  /** USD: the ledger's charge, or for `response` what its items in `/media` cost; null when they do not say. */
  price: z.number().nullable(),
  itemIds: z.array(z.string()),
  reason: z.enum(['download', 'response']),
});
export type ChargedNotDelivered = z.infer<typeof ChargedNotDelivered>;

/** The ledger against `GET /usage`, per key and per UTC day. USD throughout. */
export const Reconciliation = z.object({
  /** What the profile's delivered jobs were charged: the sum of the finished jobs. */
  total: z.number(),
  /**
   * Charged but not delivered, only for jobs this app submitted: the ledger's undelivered charges
   * and the `response` jobs' prices. A day's gap alone is never in it (`differences`).
   */
  notDelivered: z.number(),
  jobs: z.array(ChargedNotDelivered),
  /**
   * Days where `/usage` charged the app's keys (together) more than the ledger recorded; `key` is
   * the one key charged that day, null when several were. `otherClients`: the part the items other
   * clients of those keys made that day explain (the library after a sync, claimed by no job of
   * this app); `unexplained`: what neither they nor this app's `response` jobs explain.
   */
  differences: z.array(
    z.object({
      key: z.string().nullable(),
      day: z.string(),
      service: z.number(),
      ledger: z.number(),
      otherClients: z.number(),
      unexplained: z.number(),
    }),
  ),
  /** Charges to the account's other keys (the CLI, another machine): not this app's jobs. */
  otherKeys: z.number(),
  /** Charges to the app's own keys for items other clients of those keys made (reconciled, not blamed). */
  otherClients: z.number(),
  /** False when the service does not report charges per key and day: only the ledger's own gaps are shown. */
  perDay: z.boolean(),
});
export type Reconciliation = z.infer<typeof Reconciliation>;

export const RecoverInput = z.object({ jobId: z.string().min(1).max(200) });

/**
 * What the ledger holds as charged to the active profile today and this month (UTC days), for the
 * top bar's spend meter: the app's own record, without a request to the service.
 */
export const Spend = z.object({
  /** UTC day, YYYY-MM-DD. */
  day: z.string(),
  today: z.number().nonnegative(),
  month: z.number().nonnegative(),
});
export type Spend = z.infer<typeof Spend>;
