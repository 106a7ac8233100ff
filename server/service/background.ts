import type { ServiceContext } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { WebhookRelay } from '../providers/remote/webhook-relay.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import type { StartServiceOptions } from './options.ts';

// What a node takes on before it serves: provider webhooks from the other nodes, and the work its
// previous run left.

/**
 * PostgreSQL: the relay that brings provider webhooks to the node whose runner waits, whichever
 * node they land on (loaded only here); its connection carries this node's id (job-claims.ts).
 * Undefined on SQLite.
 */
export async function startProviderWebhookRelay(
  ctx: ServiceContext,
  db: SqlDatabase,
  logger: Logger,
  opts: Pick<StartServiceOptions, 'database' | 'listenDatabase'>,
): Promise<WebhookRelay | undefined> {
  if (db.dialect !== 'postgres' || opts.database === undefined) return undefined;
  const { startWebhookRelay } = await import('../providers/remote/webhook-relay.ts');
  const relay = await startWebhookRelay({
    url: opts.listenDatabase ?? opts.database,
    db,
    hub: ctx.remote.webhooks,
    logger,
    ...(ctx.remote.jobClaims ? { applicationName: ctx.remote.jobClaims.node } : {}),
  });
  ctx.remote.webhookRelay = relay;
  return relay;
}

/** Resumes the remote jobs and asynchronous generations a previous run left in flight, and says so. */
export async function resumeLeftWork(ctx: ServiceContext, logger: Logger): Promise<void> {
  const resumed = await ctx.generations.resume();
  if (resumed.providerJobs > 0)
    logger.info(
      `resuming ${resumed.providerJobs} provider job${resumed.providerJobs === 1 ? '' : 's'} left by the last run`,
    );
  if (resumed.generations > 0)
    logger.info(`resuming ${resumed.generations} asynchronous generation${resumed.generations === 1 ? '' : 's'}`);
}
