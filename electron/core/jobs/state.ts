import type {
  GeneratedItem,
  GenerationResponse,
  ImageGenerationRequest,
  MediaKind,
  RoutingMode,
  VideoGenerationRequest,
} from '../../../shared/api/index.ts';
import { JOB_STATES, type JobRoute, type JobState } from '../../../shared/ipc/schemas/jobs.ts';
import type { ServiceErrorCode } from '../api/errors.ts';

// The job states and a job's route are the contract's (shared/ipc/schemas/jobs.ts): defined once
// there, where the app's core and the renderer both read them.
export { JOB_STATES };
export type { JobRoute, JobState };

/**
 * queued → uploading → generating → downloading → done | failed | canceled.
 * Back edges: an active job returns to queued when the service says "wait" (429) or the app
 * restarts mid-upload; failed and canceled jobs return to queued on retry.
 */
const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  // queued → downloading: a retried job whose generation had succeeded only downloads again.
  queued: ['uploading', 'generating', 'downloading', 'canceled', 'failed'],
  uploading: ['generating', 'queued', 'failed', 'canceled'],
  generating: ['downloading', 'done', 'queued', 'failed', 'canceled'],
  downloading: ['done', 'failed', 'canceled'],
  done: [],
  failed: ['queued'],
  canceled: ['queued'],
};

export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** States that hold one of the tier's concurrent-generation slots. */
export function holdsSlot(state: JobState): boolean {
  return state === 'uploading' || state === 'generating';
}

export function isActive(state: JobState): boolean {
  return state === 'uploading' || state === 'generating' || state === 'downloading';
}

export function isFinished(state: JobState): boolean {
  return state === 'done' || state === 'failed' || state === 'canceled';
}

export type GenerationInput = VideoGenerationRequest | ImageGenerationRequest;

/**
 * Why a job failed: the code of the error that ended it, the same one a call that failed for that
 * cause throws (docs/architecture.md), or `interrupted`: the app stopped while the job generated
 * and no result turned up.
 */
export type JobErrorCode = ServiceErrorCode | 'interrupted';

export interface JobError {
  code: JobErrorCode;
  message: string;
}

export interface JobResult {
  items: GeneratedItem[];
  price: number | null;
  /** How the result was obtained after an interruption, if it was. */
  recoveredBy?: 'idempotency' | 'library' | 'generation';
}

/** The route a generation's response reports: its provider, price and ignored parameters. */
export function routeFromResponse(before: JobRoute | null | undefined, response: GenerationResponse): JobRoute {
  const stats = response.stats;
  const providerId = stats.providerId;
  return {
    routing: (stats.routing as RoutingMode | undefined) ?? before?.routing ?? 'optimal',
    providerId,
    // The response names no display name (its slug is not one): the preview's, when it named the
    // same provider; else none, and the screens name it from the providers list, as they name the
    // library's items (one name per provider everywhere).
    providerName: before?.providerId === providerId ? before.providerName : null,
    price: response.price,
    dropped: stats.ignoredParameters ?? [],
  };
}

export interface Job {
  id: string;
  kind: MediaKind;
  state: JobState;
  /**
   * The generation request as the user made it; the uploaded start frame fills image_url, the
   * uploaded end frame end_image_url, each as soon as its upload is done.
   */
  request: GenerationInput;
  /** A local image uploaded first as the start frame, if any. */
  startFrame: string | null;
  /** A local image uploaded after the start frame as the end frame, if any (docs/workflows.md, "The end frame slot"). */
  endFrame: string | null;
  /** Order among queued jobs; lower runs first. */
  position: number;
  /** Sent as Idempotency-Key; created when the job enters generating and kept until it leaves. */
  idempotencyKey: string | null;
  /** Epoch ms of the last submit: a lookup in /media only accepts items created after it. */
  submittedAt: number | null;
  attempts: number;
  /** A job that was told to wait (429) starts no earlier than this. */
  notBefore: number | null;
  /**
   * "Submit at…" (docs/workflows.md): epoch ms the creator scheduled the job for; null (or absent, in jobs
   * made before it existed) = as soon as it can.
   */
  submitAt?: number | null;
  error: JobError | null;
  result: JobResult | null;
  downloads: string[];
  batchId: string | null;
  /**
   * The service's generation id once a 202 gave one (asynchronous mode). Kept while the job runs:
   * after a restart the job polls it instead of submitting again.
   */
  generationId: string | null;
  /** Source media id of a `POST /videos/variations` job (`request.n` items); null otherwise. */
  variationOf: string | null;
  /** Null (or absent) when the preview could not be had (offline) and no response came yet. (docs/workflows.md) */
  route?: JobRoute | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * A job as it is asked for, before the queue and the journal fill in the rest of a `Job`: its
 * request (the v1 body) and the app's own fields. `batchId` is the queue's (enqueueBatch).
 */
export type NewJob = Pick<Job, 'kind' | 'request'> &
  Partial<Pick<Job, 'startFrame' | 'endFrame' | 'batchId' | 'variationOf' | 'route' | 'submitAt'>>;
