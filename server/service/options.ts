import type { CatalogSyncReport, MediaKind, Permission, SyncedProvider, TierName } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { CreatedKey, KeyInfo } from '../auth/api-keys.ts';
import type { ProviderStatus } from '../catalog/catalog.ts';
import type { ServiceContext } from '../context.ts';
import type { LimitOverrides } from '../limits/account-limits.ts';
import type { Logger } from '../logger.ts';
import type { HostLookup } from '../net/host-lookup.ts';
import type { ProviderAdapter, RemoteProviderId } from '../providers/remote/contract.ts';
import type { RunnerOptions } from '../providers/remote/runner.ts';
import type { RemoteProvider } from '../providers/types.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import type { WebhookTimings } from '../webhooks/dispatcher.ts';

// What startService takes and returns (server/index.ts exports them): their own module, so that
// the parts of the start in server/service/ can name what they need without importing index.ts.

export interface StartServiceOptions {
  dataDir: string;
  /** Default 127.0.0.1. A non-loopback host needs `allowRemote`. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The origin (optionally with /v1) that URLs in responses start with; default the listening address. */
  publicUrl?: string;
  /** Provider ids or slugs that fail every request (fallback drills). */
  failProviders?: string[];
  clock?: Clock;
  /** Tests: one retention, in seconds, for every tier. */
  retentionSecondsOverride?: number;
  /** How often the retention sweeper runs; 0 turns the timer off (sweepRetention() still works). Default 60 000. */
  sweepIntervalMs?: number;
  allowRemote?: boolean;
  /**
   * Fetch `image_url`s from loopback and private addresses too (`--allow-private-image-urls`).
   * Off by default: the service would otherwise fetch from its own machine and network for anyone
   * with a key. The embedded engine turns it on (its only user is the machine's owner).
   */
  allowPrivateImageUrls?: boolean;
  /** Tests: resolves `image_url` host names instead of DNS. */
  imageUrlLookup?: HostLookup;
  logger?: Logger;
  /** Seconds a private item's signed file URL works (default 24 h); public items' URLs do not expire. */
  fileUrlTtlSeconds?: number;
  /**
   * Provider keys from the embedding app (its keychain), by provider id. They win over the key file
   * (`providers set-key`) and the environment, and are kept in memory only.
   */
  providerKeys?: Partial<Record<string, string>>;
  /** API base URLs by provider id (the app's advanced setting); they win over `CLIPDESK_<ID>_BASE_URL`. */
  providerBaseUrls?: Partial<Record<string, string>>;
  /** Provider ids switched off. */
  disabledProviders?: string[];
  /**
   * Where provider keys (`FAL_KEY`, …) and `CLIPDESK_<ID>_BASE_URL` are read from; default
   * process.env. The embedded engine may pass `{}` so that a shell's variables do not leak in.
   */
  providerEnv?: NodeJS.ProcessEnv;
  /** Adapters by provider id over the built-in ones (tests; a provider absent from both is not offered). */
  providerAdapters?: Partial<Record<RemoteProviderId, ProviderAdapter>>;
  /**
   * Tests: remote providers with offers of their own, beside the catalog's; one with the id of a
   * catalog provider replaces it. Their keys and base URLs come from the same settings as any.
   */
  remoteProviders?: RemoteProvider[];
  /** Remote job timings (tests use milliseconds); the defaults suit real providers. */
  remoteTimings?: RemoteTimings;
  /** How often the key file is looked at for `providers set-key` changes (default 1 s; key-file-watch.ts). */
  keyFileCheckMs?: number;
  /**
   * Send webhooks to loopback and private addresses too (`--allow-private-webhooks`). Off by
   * default: a key holder could otherwise make the service POST into its own machine and network.
   * The embedded engine turns it on (its only user is the machine's owner).
   */
  allowPrivateWebhooks?: boolean;
  /** Tests: resolves webhook host names instead of DNS. */
  webhookLookup?: HostLookup;
  /** Webhook delivery timings (tests use milliseconds); the defaults: 10 s per attempt, retries for 24 h. */
  webhookTimings?: WebhookTimings;
  /**
   * `postgres://…`: the service's rows live in that PostgreSQL database (several nodes may share
   * it). Absent: the SQLite database in `dataDir` (the embedded default).
   */
  database?: string;
  /**
   * PostgreSQL only (`serve --listen-database`): the same database through an address that keeps a
   * session (PostgreSQL itself, or a pooler in session mode), for the LISTEN connections (provider
   * webhooks' relay, the generation queue's wake-ups), one of which carries the node's id for the
   * other nodes' liveness check (job-claims.ts). Default: `database`, which may then go through a
   * pooler in transaction mode.
   */
  listenDatabase?: string;
  /**
   * PostgreSQL only: the generation queue's lease (seconds without a heartbeat before another node
   * takes a generation over; default 30, at least 10) and how many generations this node runs at
   * once (default 16).
   */
  generationQueue?: { leaseSeconds?: number; workers?: number };
  /**
   * Migrate the database to this build's schema at start (default). False (`serve --no-migrate`,
   * where an operator runs `migrate` as a deployment step): a database at another version is
   * refused with SchemaOutOfDateError or SchemaTooNewError, and nothing is changed.
   */
  migrate?: boolean;
  /**
   * Where the service keeps its files (server/storage/blobs/): items, thumbnails, transcodes and
   * upload bodies. Default: the disk store on the data directory (its layout as before). The
   * caller keeps ownership (an S3 store's client is not closed by close()).
   */
  store?: BlobStore;
  /**
   * `/v1/files/…` answers 302 to the store's presigned URL rather than streaming the file through
   * the service (`--file-redirects`); only for stores that have presigned URLs (S3).
   */
  fileRedirects?: boolean;
  /**
   * Hours between scheduled catalog syncs (`serve --catalog-sync-interval`; default 24, 0 = off):
   * on one node at a time, the first one an interval after start (docs/providers.md, "Syncing the catalog").
   */
  catalogSyncIntervalHours?: number;
  /** How often the operator catalog is looked at for a change made elsewhere (default 5 000 ms). */
  catalogCheckMs?: number;
  /**
   * Tests only: receives this node's context once it is wired, so that a test can drive a module
   * on a real node in an order no request can force (an older queue attempt's commit after another
   * attempt took the row: test/integration/server/queue-commit.test.ts).
   */
  onContext?: (ctx: ServiceContext) => void;
  /**
   * What this process is, in the words another one shows when it finds the data folder served:
   * `clipdesk-service serve`, the app's Local engine … (docs/service.md, "One service per data folder").
   */
  program?: string;
  /**
   * SQLite: false lets this service share its data folder with another one in this process, which
   * no program does: only tests that stand two nodes on one SQLite file, to exercise what nodes on
   * PostgreSQL do, pass it. Default true: the folder's lock is taken, or the start refused.
   */
  dataFolderLock?: boolean;
}

export interface RemoteTimings extends Partial<RunnerOptions> {
  /** An output download that sends nothing this long is resumed or given up. Default 60 000. */
  stallMs?: number;
  /** A 429's Retry-After is waited out once when at most this long, else the next provider. Default 30. */
  maxRateLimitWaitSeconds?: number;
  /** Failures in a row before a provider is skipped for `cooldownMs`. Default 3. */
  failuresBeforeCooldown?: number;
  /** Default 60 000. */
  cooldownMs?: number;
  /**
   * PostgreSQL: how long a node's claim on a synchronous generation's provider job outlives the
   * node (job-claims.ts); renewed, and checked for lapsed ones, every third of it. Default 60 000.
   */
  providerJobLeaseMs?: number;
}

export type ProviderKeyTest = { ok: true } | { ok: false; message: string };

/** Instrumentation for tests: the highest number of generations seen running at once. */
export interface ServiceStats {
  maxConcurrent(user: string, kind: MediaKind): number;
  running(user: string, kind: MediaKind): number;
  snapshot(): Array<{ user: string; kind: MediaKind; max: number }>;
}

export interface RunningService {
  /** `http://HOST:PORT/v1` */
  url: string;
  host: string;
  port: number;
  /**
   * Stops the service. It stops accepting connections and /readyz answers 503 at once; requests
   * in flight may then finish for up to `graceMs` (default 0: the embedded engine quits at once).
   * After that, whatever still runs is aborted: a synchronous request is answered 503 and charged
   * nothing, an asynchronous generation stays queued for the next start to resume, and a remote
   * provider job stays recorded, to be polled, never submitted again. Then the database closes.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  /** The new key, and its webhook signing secret (`webhookSecret`): both shown this once. */
  createKey(o: {
    user: string;
    tier?: TierName;
    name?: string;
    permissions?: Permission[];
  }): Promise<CreatedKey & { webhookSecret: string }>;
  /** A new webhook signing secret for the key (the old one stops working); rejects for an unknown key. */
  rotateWebhookSecret(keyId: string): Promise<string>;
  revokeKey(id: string): Promise<boolean>;
  listKeys(user: string): Promise<KeyInfo[]>;
  setTier(user: string, tier: TierName): Promise<void>;
  /** `users set-limits`: merges per-account limits; false when there is no such user. */
  setLimits(user: string, limits: LimitOverrides): Promise<boolean>;
  /** Runs retention now; resolves with the number of items deleted. */
  sweepRetention(): Promise<number>;
  stats: ServiceStats;
  /**
   * The app's key for a provider (null removes it). Takes effect at once: a removed key stops
   * routing to the provider (unless the key file or the environment has one). Kept in memory only.
   */
  setProviderKey(id: string, key: string | null): Promise<void>;
  setProviderEnabled(id: string, enabled: boolean): Promise<void>;
  /** null: back to `CLIPDESK_<ID>_BASE_URL` or the SDK's default. Refuses a URL that is not http(s). */
  setProviderBaseUrl(id: string, url: string | null): Promise<void>;
  /**
   * One cheap authenticated call that makes nothing (adapter.testKey) with the provider's key in
   * use, or with `key` to try one before storing it.
   */
  testProviderKey(id: string, key?: string): Promise<ProviderKeyTest>;
  /** Every remote provider of this build, configured or not, for Settings → Providers (never a key). */
  providerStatus(): Promise<ProviderStatus[]>;
  /**
   * Syncs the catalog from the providers' listings now (Settings → Providers → "Refresh models"),
   * the providers with a configured key unless named, and reloads it (docs/providers.md, "Syncing the catalog").
   */
  syncCatalog(options?: { providers?: SyncedProvider[] }): Promise<CatalogSyncReport>;
}
