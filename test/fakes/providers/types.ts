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
  | 'no_output';
export interface FakeOptions {
  /** The one key the fake accepts (default `test-<id>-key-0001`). */
  key?: string;
  /** What every new job does (default 'succeed'); change it at runtime with `fake.scenario = …`. */
  scenario?: FakeScenario;
  /** Status polls a job answers "queued"/"running" before it is done (default 2). */
  pollsBeforeDone?: number;
  /** Retry-After seconds sent with 429s (default 1). */
  retryAfterSeconds?: number;
}
export interface RunningFake {
  /** The base URL to give the SDK (its base-URL option) — e.g. `http://127.0.0.1:PORT`. */
  baseUrl: string;
  /** The key it accepts. */
  key: string;
  scenario: FakeScenario;
  /** Every request received: method, path (with query), lower-cased headers, parsed JSON body if any. */
  requests: Array<{ method: string; path: string; headers: Record<string, string>; body?: unknown }>;
  /** Generation jobs created (a resumed job must not add one). */
  submissions(): number;
  close(): Promise<void>;
}
