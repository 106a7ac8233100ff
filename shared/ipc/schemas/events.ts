import { z } from 'zod';
import { Job, QueueStats } from './jobs.ts';
import { RateLimitState } from './catalog.ts';

/** Upload or download progress, for a job's bars and for library downloads. */
export const TransferEvent = z.object({
  id: z.string(),
  direction: z.enum(['upload', 'download']),
  jobId: z.string().nullable(),
  itemId: z.string().nullable(),
  done: z.number().nonnegative(),
  total: z.number().nonnegative().nullable(),
  state: z.enum(['running', 'done', 'failed', 'canceled']),
  error: z.string().nullable(),
});
export type TransferEvent = z.infer<typeof TransferEvent>;

export const NotificationEvent = z.object({
  level: z.enum(['info', 'success', 'warning', 'error']),
  title: z.string(),
  body: z.string(),
  jobId: z.string().nullable(),
  itemId: z.string().nullable(),
});
export type NotificationEvent = z.infer<typeof NotificationEvent>;

/**
 * Put a finished job's take on the stage (docs/workflows.md, "Notices"): sent when the creator clicks
 * the desktop notification of a finished job. `itemId` is its first take, null when main does not know it.
 */
export const ShowTakeEvent = z.object({
  jobId: z.string().min(1).max(200),
  itemId: z.string().min(1).max(200).nullable(),
});
export type ShowTakeEvent = z.infer<typeof ShowTakeEvent>;

export const LibraryChangedEvent = z.object({
  reason: z.enum(['sync', 'download', 'favourite', 'collection', 'retention', 'lost', 'generated', 'chain', 'preview']),
  /** Changed items when known; empty means "requery". */
  ids: z.array(z.string()),
});

/** Progress of an ffmpeg operation started by library.export / media.trim / library.useLastFrame. */
export const MediaTaskEvent = z.object({
  id: z.string(),
  itemId: z.string().nullable(),
  operation: z.string(),
  /** 0..1, null when unknown. */
  progress: z.number().min(0).max(1).nullable(),
  state: z.enum(['running', 'done', 'failed', 'canceled']),
});

/**
 * Everything main pushes to the renderer, on the one `events.subscribe` stream.
 * Electron: over the IPC message port. Browser mode: oRPC's event stream over HTTP (SSE framing).
 */
export const AppEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('job.updated'), job: Job }),
  z.object({ type: z.literal('job.removed'), id: z.string() }),
  z.object({ type: z.literal('queue.stats'), stats: QueueStats }),
  z.object({ type: z.literal('transfer.progress'), transfer: TransferEvent }),
  z.object({ type: z.literal('library.changed'), change: LibraryChangedEvent }),
  z.object({ type: z.literal('media.task'), task: MediaTaskEvent }),
  z.object({ type: z.literal('ratelimit.changed'), state: RateLimitState }),
  z.object({ type: z.literal('profiles.changed') }),
  z.object({ type: z.literal('settings.changed') }),
  /** A provider key, switch or base URL changed: the provider list and the models' offers may differ. */
  z.object({ type: z.literal('providers.changed') }),
  z.object({ type: z.literal('notification'), notification: NotificationEvent }),
  z.object({ type: z.literal('stage.show'), take: ShowTakeEvent }),
]);
export type AppEvent = z.infer<typeof AppEvent>;
export type AppEventType = AppEvent['type'];

export const EventsSubscribeInput = z.object({ types: z.array(z.string().max(50)).max(20).optional() }).optional();
