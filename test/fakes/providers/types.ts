/**
 * The shape every provider contract fake shares (docs/providers.md). A fake is a loopback HTTP server that
 * follows one provider's public API (paths, bodies, status codes, auth headers, polling states,
 * errors); the provider's official SDK reaches it only through its base-URL setting.
 */

/**
 * What a new job does:
 * - succeed: queued → running → succeeded, with a real ffmpeg-made MP4 (or PNG) as output;
 * - fail: the job fails at the provider;
 * - cancel: the job ends canceled at the provider (as if canceled elsewhere);
 * - slow: the job stays running until it is canceled (for timeouts);
 * - content_policy: the provider refuses the prompt with its content-policy reason;
 * - unauthorized: every request answers 401, whatever the key;
 * - rate_limited: 429 with `Retry-After`;
 * - server_error: 5xx;
 * - malformed: a 200 whose body is not JSON;
 * - no_output: the job succeeds without any output;
 * - aborted: the job ends `aborted` (Replicate: a prediction stopped before it started, as by a
 *   deadline), which the adapter reads as a failure that falls back.
 */
export type FakeScenario =
  | 'succeed'
  | 'fail'
  | 'cancel'
  | 'slow'
  | 'content_policy'
  | 'unauthorized'
  | 'rate_limited'
  | 'server_error'
  | 'malformed'
  | 'no_output'
  | 'aborted';

export interface FakeOptions {
  /** The one key the fake accepts (default `test-<id>-key-0001`). */
  key?: string;
  /** What every new job does (default 'succeed'); change it at runtime with `fake.scenario = …`. */
  scenario?: FakeScenario;
  /** Status polls a job answers "queued"/"running" before it is done (default 2). */
  pollsBeforeDone?: number;
  /** Retry-After seconds sent with 429s (default 1). */
  retryAfterSeconds?: number;
  /** The next this many status polls (and fal result fetches) answer 429 (default 0); see RunningFake. */
  pollRateLimits?: number;
  /** The Retry-After of those 429s: seconds, or null to send none (default: `retryAfterSeconds`). */
  pollRetryAfter?: number | null;
  /** Output URLs answer as an expired file does (default false). */
  expiredOutputs?: boolean;
}

/**
 * Behaviours a fake shows beside its scenario, as the real service does (docs/providers.md,
 * "Contract fakes"): every request body is checked against the model's input schema (the same
 * files the adapters check with, server/providers/catalog-file/input-schemas/) and refused in the
 * provider's own words; status polls may be rate limited, with or without Retry-After; outputs
 * may have expired. Change them at runtime: `fake.behaviour.pollRateLimits = 3`.
 */
export interface FakeBehaviour {
  pollRateLimits: number;
  pollRetryAfter: number | null;
  expiredOutputs: boolean;
}

export interface RunningFake {
  /** The base URL to give the SDK (its base-URL option) — e.g. `http://127.0.0.1:PORT`. */
  baseUrl: string;
  /** The key it accepts. */
  key: string;
  scenario: FakeScenario;
  behaviour: FakeBehaviour;
  /** Every request received: method, path (with query), lower-cased headers, parsed JSON body if any. */
  requests: Array<{ method: string; path: string; headers: Record<string, string>; body?: unknown }>;
  /** Generation jobs created (a resumed job must not add one). */
  submissions(): number;
  close(): Promise<void>;
}
