import type { ServiceCatalogSync } from '../catalog/sync/service-sync.ts';
import type { ConcurrencyLimiter } from '../limits/concurrency.ts';
import type { StorageReservations } from '../limits/storage-quota.ts';
import type { Logger } from '../logger.ts';
import type { KeyFileWatch } from '../providers/key-file-watch.ts';
import type { ProviderJobClaims } from '../providers/remote/job-claims.ts';
import type { WebhookRelay } from '../providers/remote/webhook-relay.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import type { ServedHttp } from './http-server.ts';
import type { Rounds } from './rounds.ts';

/** What a running service stops, in the order close stops it. */
export interface ClosingParts {
  http: ServedHttp;
  rounds: Rounds;
  catalogSync: Pick<ServiceCatalogSync, 'stop'>;
  keyFileWatch: Pick<KeyFileWatch, 'stop'>;
  queue: GenerationQueue | undefined;
  /** Aborts what still runs once the grace is over. */
  shutdown: AbortController;
  /** The work ctx.track follows. */
  pending: Set<Promise<unknown>>;
  claims: Pick<ProviderJobClaims, 'releaseAll'> | undefined;
  relay: Pick<WebhookRelay, 'close'> | undefined;
  webhooks: Pick<WebhookDispatcher, 'stop'>;
  concurrency: Pick<ConcurrencyLimiter, 'close'>;
  reservations: Pick<StorageReservations, 'close'>;
  db: Pick<SqlDatabase, 'close'>;
  logger: Logger;
}

/** RunningService.close: the graceful stop, run once however often it is called. */
export function closeOnce(parts: ClosingParts): (options?: { graceMs?: number }) => Promise<void> {
  let closing: Promise<void> | null = null;
  return (options = {}) => {
    closing ??= close(parts, Math.max(0, options.graceMs ?? 0));
    return closing;
  };
}

async function close(parts: ClosingParts, graceMs: number): Promise<void> {
  const { http, rounds, queue, claims, logger } = parts;
  http.startDraining();
  rounds.stopSweeps();
  await parts.catalogSync.stop();
  parts.keyFileWatch.stop();
  // No new generation from the queue; those running here are handed back below.
  await queue
    ?.stopTaking()
    .catch((error: unknown) => logger.warn(`could not stop taking generations: ${String(error)}`));
  const stopped = http.stopListening();
  if (http.inFlight() > 0 && graceMs > 0)
    logger.info(
      `stopping: waiting up to ${Math.ceil(graceMs / 1000)} s for ${http.inFlight()} request${http.inFlight() === 1 ? '' : 's'} in flight`,
    );
  if (!(await http.answered(graceMs)) && graceMs > 0)
    logger.warn(
      `stopping: ${http.inFlight()} request${http.inFlight() === 1 ? '' : 's'} still in flight after ${Math.ceil(graceMs / 1000)} s are aborted`,
    );
  // Asynchronous generations are handed back here: aborted by shutdown, they stay queued in
  // the database and the next start resumes them (remote jobs through provider_jobs). On
  // PostgreSQL their queue jobs are failed, so another node retries them at once.
  parts.shutdown.abort();
  await rounds.stopClaimRounds();
  await Promise.allSettled([...parts.pending]);
  // The provider jobs left here stay recorded: another node may resume them at once.
  await claims
    ?.releaseAll()
    .catch((error: unknown) => logger.warn(`could not hand back provider jobs (their claims lapse): ${String(error)}`));
  await parts.relay?.close();
  await queue?.close().catch((error: unknown) => logger.warn(`could not stop the generation queue: ${String(error)}`));
  // After the generations: one finishing while closing still records its delivery.
  await parts.webhooks.stop();
  http.closeAllConnections();
  await stopped;
  await rounds.sweepEnded();
  await parts.concurrency
    .close()
    .catch((error: unknown) => logger.warn(`could not release concurrency slots: ${String(error)}`));
  await parts.reservations
    .close()
    .catch((error: unknown) => logger.warn(`could not release storage reservations: ${String(error)}`));
  await rounds
    .flushKeyRequests()
    .catch((error: unknown) => logger.error(`could not save request counts: ${String(error)}`));
  await parts.db.close();
}
