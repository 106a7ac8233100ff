import type { AdapterSettings, RemoteProviderId } from './contract.ts';
import type { ProviderJobClaims } from './job-claims.ts';
import type { RunnerOptions } from './runner.ts';
import type { WebhookRelay } from './webhook-relay.ts';
import type { WebhookHub } from './webhooks.ts';

/** What the generation loop needs to run remote provider jobs (wired by startService). */
export interface RemoteRuntime {
  /**
   * How a provider is reached: its key and base URL, from the key store (catalog engineer) or
   * startService's `providerSettings`; undefined when it has no key. Never logged or stored.
   */
  settings(id: RemoteProviderId): AdapterSettings | undefined;
  options: RunnerOptions;
  /** Seconds without data before an output download is resumed or given up. Default 60. */
  stallMs: number;
  /** A 429's Retry-After up to this many seconds is waited out (once); longer falls back. Default 30. */
  maxRateLimitWaitSeconds: number;
  webhooks: WebhookHub;
  /**
   * PostgreSQL (several nodes): passes a verified delivery no runner here waits on to the other
   * nodes (webhook-relay.ts). Absent on SQLite, where the one node's hub is the whole story.
   */
  webhookRelay?: WebhookRelay;
  /**
   * PostgreSQL (several nodes): which node polls each synchronous generation's provider job
   * (job-claims.ts). Absent on SQLite, where the one node resumes every job at its start.
   */
  jobClaims?: ProviderJobClaims;
  /** `--public-url` (origin, no /v1): webhooks are asked for only with one; otherwise jobs are polled. */
  publicUrl?: string;
}

/** The webhook address a provider is given for its jobs, or undefined (poll) without a public URL. */
export function webhookUrlFor(runtime: RemoteRuntime, provider: RemoteProviderId): string | undefined {
  return runtime.publicUrl === undefined ? undefined : `${runtime.publicUrl}/v1/provider-webhooks/${provider}`;
}
