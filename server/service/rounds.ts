import type { ServiceContext } from '../context.ts';
import type { Logger } from '../logger.ts';
import { createRetentionSweeper } from '../retention/sweeper.ts';

/** What a running service does now and then: provider-job claims, retention sweeps, request counts. */
export interface Rounds {
  /** Runs retention now (or joins the sweep running); resolves with the number of items deleted. */
  sweep: () => Promise<number>;
  /** Per-key request counts kept in memory (SQLite; PostgreSQL writes them as it counts) go out. */
  flushKeyRequests: () => Promise<void>;
  /** No more timed sweeps and flushes. */
  stopSweeps: () => void;
  /** No more claim rounds; resolves once the one running, if any, has ended. */
  stopClaimRounds: () => Promise<void>;
  /** Resolves once the sweep running, if any, has ended (never rejects). */
  sweepEnded: () => Promise<void>;
}

/** Starts the rounds; none runs while the service is `draining`. */
export function startRounds(
  ctx: ServiceContext,
  at: { node: string; logger: Logger; sweepIntervalMs: number | undefined; draining: () => boolean },
): Rounds {
  const { logger } = at;
  // PostgreSQL: this node's claims on provider jobs are renewed, and jobs nobody holds any more (a
  // dead node's) are resumed here, every third of a claim's lease.
  const claims = ctx.remote.jobClaims;
  let claimRound: Promise<void> | null = null;
  const claimTimer = claims
    ? setInterval(() => {
        if (at.draining() || claimRound) return;
        claimRound = (async () => {
          await claims.renew();
          const taken = await ctx.generations.resumeUnclaimedJobs();
          if (taken > 0)
            logger.info(`resuming ${taken} provider job${taken === 1 ? '' : 's'} another node left unfinished`);
        })()
          .catch((error: unknown) => logger.warn(`could not renew or check provider job claims: ${String(error)}`))
          .finally(() => {
            claimRound = null;
          });
      }, claims.leaseMs / 3)
    : null;
  claimTimer?.unref();

  const flushKeyRequests = () => ctx.rate.saveKeyRequests();
  const sweepEvery = at.sweepIntervalMs ?? 60_000;
  // One node at a time sweeps (a lease in the database); this one skips a round another holds.
  const sweepOnOneNode = createRetentionSweeper(ctx, { node: at.node });
  let sweeping: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    sweeping ??= sweepOnOneNode().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const timer =
    sweepEvery > 0
      ? setInterval(() => {
          flushKeyRequests().catch((error: unknown) => logger.error(`could not save request counts: ${String(error)}`));
          sweep().catch((error: unknown) => logger.error(`retention sweep failed: ${String(error)}`));
        }, sweepEvery)
      : null;
  timer?.unref();

  return {
    sweep,
    flushKeyRequests,
    stopSweeps: () => {
      if (timer) clearInterval(timer);
    },
    stopClaimRounds: async () => {
      if (claimTimer) clearInterval(claimTimer);
      await claimRound;
    },
    sweepEnded: async () => {
      await sweeping?.catch(() => undefined);
    },
  };
}
