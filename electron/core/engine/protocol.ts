import type { RunningService, StartServiceOptions } from '../../../server/index.ts';
import type { MediaKind } from '../../../shared/api/index.ts';

/**
 * The messages between the app and the Local engine's own process (engine-child-entry.ts). The engine
 * runs the service in a process of its own so that its renders' process spawns, its polls and its
 * pipeline steps never take turns with the app's IPC on main's event loop (docs/architecture.md, "The Local engine's process").
 */

/** What the engine process starts the service with: only what survives a structured clone. */
export type EngineStartOptions = Pick<
  StartServiceOptions,
  | 'dataDir'
  | 'port'
  | 'allowPrivateImageUrls'
  | 'allowPrivateWebhooks'
  | 'providerEnv'
  | 'providerKeys'
  | 'providerBaseUrls'
  | 'disabledProviders'
  | 'program'
>;

/** The service's catalog sync, behind Settings → Providers → "Refresh models" (docs/providers.md, "Syncing the catalog"). */
export type EngineCatalogSync = Pick<RunningService, 'syncCatalog'>;

/** The running service's methods the app may call across the process boundary; all async already. */
export const ENGINE_METHODS = [
  'createKey',
  'revokeKey',
  'listKeys',
  'setTier',
  'setLimits',
  'sweepRetention',
  'rotateWebhookSecret',
  'setProviderKey',
  'setProviderEnabled',
  'setProviderBaseUrl',
  'testProviderKey',
  'providerStatus',
  'syncCatalog',
] as const satisfies readonly (keyof RunningService)[];
export type EngineMethod = (typeof ENGINE_METHODS)[number];

/** The service's test instrumentation, asked for across the boundary (RunningService.stats is synchronous). */
export const ENGINE_STATS = ['maxConcurrent', 'running'] as const;
export type EngineStat = (typeof ENGINE_STATS)[number];

export type ToEngine =
  | { type: 'start'; options: EngineStartOptions }
  | { type: 'call'; id: number; method: EngineMethod; args: unknown[] }
  | { type: 'stat'; id: number; stat: EngineStat; user: string; kind: MediaKind }
  | { type: 'close' };

/** An error as it crosses: its class name (for the log) and its message (what the app shows). */
export interface WireError {
  name: string;
  message: string;
}

export type FromEngine =
  | { type: 'started'; url: string; host: string; port: number }
  | { type: 'failed'; error: WireError }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: WireError }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'closed' };

export function toWireError(error: unknown): WireError {
  return error instanceof Error
    ? { name: error.name, message: error.message }
    : { name: 'Error', message: String(error) };
}

export function fromWireError(error: WireError): Error {
  const e = new Error(error.message);
  e.name = error.name;
  return e;
}

/**
 * A message from the engine process, checked before it is believed: the process is ours, but a
 * crash mid-write or a stray `process.send` must fail loudly here, not as an undefined deep inside.
 */
export function isFromEngine(m: unknown): m is FromEngine {
  if (typeof m !== 'object' || m === null) return false;
  const t = (m as { type?: unknown }).type;
  switch (t) {
    case 'started':
      return typeof (m as { url?: unknown }).url === 'string' && typeof (m as { port?: unknown }).port === 'number';
    case 'failed':
      return typeof (m as { error?: { message?: unknown } }).error?.message === 'string';
    case 'result':
      return typeof (m as { id?: unknown }).id === 'number' && typeof (m as { ok?: unknown }).ok === 'boolean';
    case 'log':
      return ['info', 'warn', 'error'].includes(String((m as { level?: unknown }).level));
    case 'closed':
      return true;
    default:
      return false;
  }
}
