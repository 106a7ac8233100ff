import type { Logger } from '../logger.ts';
import { defaultHostLookup } from '../net/host-lookup.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { WebhookSecrets } from '../webhooks/secrets.ts';
import type { WebhookTargetPolicy } from '../webhooks/target.ts';
import type { StartServiceOptions } from './options.ts';

/** Webhooks to the service's clients: their signing secrets, where they may go, their deliveries. */
export interface ClientWebhooks {
  secrets: WebhookSecrets;
  policy: WebhookTargetPolicy;
  dispatcher: WebhookDispatcher;
}

/** Wires the clients' webhooks; nothing is sent until `dispatcher.start()`. */
export function wireClientWebhooks(
  db: SqlDatabase,
  dataSecret: Buffer,
  logger: Logger,
  opts: Pick<StartServiceOptions, 'allowPrivateWebhooks' | 'webhookLookup' | 'webhookTimings'>,
): ClientWebhooks {
  const secrets = new WebhookSecrets(db, dataSecret);
  const policy = {
    allowPrivate: opts.allowPrivateWebhooks === true,
    lookup: opts.webhookLookup ?? defaultHostLookup,
  };
  const dispatcher = new WebhookDispatcher({
    db,
    secrets,
    policy,
    logger,
    timings: opts.webhookTimings,
  });
  return { secrets, policy, dispatcher };
}
