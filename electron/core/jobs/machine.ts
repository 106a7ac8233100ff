/**
 * The job's state machine (docs/architecture.md, "The job queue"): a pure function from a job and
 * an event to what happens next — the state it moves to and the patch the journal writes, and the
 * effects the runner (runner.ts) then performs. Nothing here reads a clock, calls the service or
 * touches the journal: the runner passes the time and a fresh key in, and performs what comes out.
 */
import { frameToUpload, withFrameUrl } from './frames.ts';
import type { FrameSlot } from './frames.ts';
import type { JobPatch } from './journal.ts';
import { canTransition, isFinished } from './state.ts';
import type { Job, JobError, JobResult, JobRoute, JobState } from './state.ts';

/** What happened to a job: the queue's own calls, and the answers of the runs it started. */
export type JobEvent =
  /** The scheduler picked the queued job. */
  | { type: 'launch' }
  /** The job's start or end frame is on the service at `url`. */
  | { type: 'uploaded'; frame: FrameSlot; url: string }
  /** A 202 named the generation. */
  | { type: 'accepted'; generationId: string }
  /** The generation's result: from the answer, a poll, a repeat with the same key, or the library. */
  | { type: 'generated'; result: JobResult; route?: JobRoute }
  /** Canceled on the service (another client, the CLI). */
  | { type: 'canceledOnService'; detail: string }
  /** A 429: wait `waitMs`, then submit again with a new key. */
  | { type: 'rateLimited'; waitMs: number; message: string }
  /** The service could not be reached before it accepted anything: wait for it, key kept. */
  | { type: 'unreachable'; message: string }
  /** The generation POST failed and the request may have reached the service. */
  | { type: 'ambiguous'; generationId: string | null }
  /** An error that ends the job. */
  | { type: 'failed'; error: JobError }
  /** No result turned up within the reconcile window after an interruption. */
  | { type: 'lost' }
  /** One more item is saved; `downloads` lists every saved path so far. */
  | { type: 'saved'; downloads: string[] }
  | { type: 'downloaded'; downloads: string[] }
  /** The user canceled. */
  | { type: 'cancel' }
  /** The user retried (or recovered with `result`); `stopping`: its canceled run has not ended yet. */
  | { type: 'retry'; position: number; result?: JobResult; stopping: boolean }
  | { type: 'remove' }
  | { type: 'schedule'; at: number | null }
  | { type: 'reorder'; position: number }
  /** The app started and found the job as the journal left it. */
  | { type: 'restart' };

export type JobEventType = JobEvent['type'];

/** What the runner does after (or, for `before`, ahead of) the journal write. */
export type JobEffect =
  | { type: 'upload' }
  | { type: 'submit' }
  | { type: 'download' }
  /** Poll the generation the job names (after a restart, or a lost answer to a 202). */
  | { type: 'follow' }
  /** Find the result of a request that may have reached the service; never resubmit blindly. */
  | { type: 'reconcile' }
  /** The user canceled: stop the job's run (its POST's answer may still be awaited, see cancelGraceMs). */
  | { type: 'stopRun' }
  /** Stop the job's run at once (the service has the generation and is told to cancel it). */
  | { type: 'abortRun' }
  /** The run ends here: its job was canceled while it waited for an answer. */
  | { type: 'endRun' }
  | { type: 'cancelRemote'; generationId: string }
  | { type: 'goOffline' }
  /** Ask the unreachable service again now rather than at the next probe. */
  | { type: 'probeNow' }
  | { type: 'forget' }
  | { type: 'pump' };

export type JobStep =
  | { kind: 'move'; to: JobState; patch: JobPatch; detail?: string; before: JobEffect[]; effects: JobEffect[] }
  /** A change that is no transition; `announce`: listeners are told (the journal's key writes are not news). */
  | { kind: 'update'; patch: JobPatch; announce: boolean; effects: JobEffect[] }
  | { kind: 'effects'; effects: JobEffect[] }
  /** Nothing to do: the event does not apply to the job as it is now (as the public calls were). */
  | { kind: 'ignore' }
  /** The caller asked for something the job's state forbids: JobConflictError. */
  | { kind: 'conflict'; message: string }
  /** The event cannot happen in this state: the runner's bug, JobTransitionError. */
  | { kind: 'refuse' };

/** What the runner knows that a pure function cannot: the time, a fresh key, its ports. */
export interface StepContext {
  now: number;
  newKey: string;
  /** Results are saved (a downloader is configured); without it a job is done when it generates. */
  saves: boolean;
}

export const INTERRUPTED_MESSAGE =
  'The app stopped while this was generating and no result turned up in the library. Retry to submit it again.';

const move = (
  to: JobState,
  patch: JobPatch = {},
  effects: JobEffect[] = [],
  detail?: string,
  before: JobEffect[] = [],
): JobStep => ({ kind: 'move', to, patch, ...(detail === undefined ? {} : { detail }), before, effects });
const IGNORE: JobStep = { kind: 'ignore' };
const REFUSE: JobStep = { kind: 'refuse' };

/** A local frame still has to go up: its field in the request (image_url, end_image_url) is empty. */
export function needsUpload(job: Pick<Job, 'startFrame' | 'endFrame' | 'request'>): boolean {
  return frameToUpload(job) !== null;
}

/**
 * Into generating: the key is written before the request is sent, so after a crash the job is
 * known to have maybe reached the service. A job back from "Waiting for the service" keeps its key
 * and first submit time: never two generations of one job.
 */
function submit(job: Job, ctx: StepContext, request: Job['request']): JobStep {
  const again = job.idempotencyKey !== null;
  return move(
    'generating',
    {
      request,
      idempotencyKey: job.idempotencyKey ?? ctx.newKey,
      submittedAt: again && job.submittedAt !== null ? job.submittedAt : ctx.now,
      attempts: job.attempts + 1,
      notBefore: null,
      error: null,
    },
    [{ type: 'submit' }],
  );
}

function launch(job: Job, ctx: StepContext): JobStep {
  if (job.state !== 'queued') return REFUSE;
  if (job.result) return move('downloading', {}, [{ type: 'download' }], 'retry download');
  if (needsUpload(job)) return move('uploading', { notBefore: null }, [{ type: 'upload' }]);
  return submit(job, ctx, job.request);
}

/**
 * A frame is up. Its URL is written into the request at once, before the next frame goes up, so
 * a crash or a retry never uploads it again (the journal is the truth); the job is submitted
 * only when every local frame has its URL. Not announced: the request's URLs are not news to the
 * screens, which show the frames as the files they were.
 */
function uploaded(job: Job, event: Extract<JobEvent, { type: 'uploaded' }>, ctx: StepContext): JobStep {
  if (job.state !== 'uploading') return REFUSE;
  const request = withFrameUrl(job.request, event.frame, event.url);
  if (needsUpload({ ...job, request })) {
    return { kind: 'update', patch: { request }, announce: false, effects: [{ type: 'upload' }] };
  }
  return submit(job, ctx, request);
}

/** `route`: what the response says the job ran on and cost, replacing the preview's. */
function generated(job: Job, event: Extract<JobEvent, { type: 'generated' }>, ctx: StepContext): JobStep {
  const route = event.route ? { route: event.route } : {};
  // Canceled while a service without asynchronous mode finished it: it is charged, so the
  // canceled job keeps the result (the ledger counts it; Retry only downloads it).
  if (job.state === 'canceled') {
    return { kind: 'update', patch: { result: event.result, ...route }, announce: true, effects: [{ type: 'endRun' }] };
  }
  if (job.state !== 'generating') return REFUSE;
  const patch = { result: event.result, idempotencyKey: null, generationId: null, ...route };
  return ctx.saves ? move('downloading', patch, [{ type: 'download' }]) : move('done', patch);
}

function accepted(job: Job, generationId: string): JobStep {
  // Written before the first poll: from now on a restart polls this id, never submits again.
  if (job.state === 'generating') return { kind: 'update', patch: { generationId }, announce: false, effects: [] };
  // Canceled while the POST was on its way: the service has it now, so cancel it there, then
  // stop following it.
  if (job.state === 'canceled') {
    return { kind: 'effects', effects: [{ type: 'cancelRemote', generationId }, { type: 'abortRun' }] };
  }
  return IGNORE;
}

const KEEPS_CANCELED = new Set<JobEventType>(['accepted', 'generated', 'failed']);

/** The answers of a run. A canceled job's run only unwinds: its answers change nothing more. */
function runAnswer(job: Job, event: JobEvent, ctx: StepContext): JobStep {
  if (job.state === 'canceled' && !KEEPS_CANCELED.has(event.type)) {
    return { kind: 'effects', effects: [{ type: 'endRun' }] };
  }
  switch (event.type) {
    case 'uploaded':
      return uploaded(job, event, ctx);
    case 'accepted':
      return accepted(job, event.generationId);
    case 'generated':
      return generated(job, event, ctx);
    case 'canceledOnService':
      if (job.state !== 'generating') return REFUSE;
      return move('canceled', { generationId: null, idempotencyKey: null }, [], event.detail);
    case 'rateLimited':
      if (job.state !== 'generating') return REFUSE;
      return move(
        'queued',
        { notBefore: ctx.now + event.waitMs, idempotencyKey: null, generationId: null },
        [],
        `rate limited: ${event.message}`,
      );
    case 'unreachable':
      if (job.state !== 'uploading' && job.state !== 'generating') return REFUSE;
      // goOffline first, so this job's own event already says "Waiting for the service".
      return move('queued', { notBefore: null, generationId: null }, [], `service unreachable: ${event.message}`, [
        { type: 'goOffline' },
      ]);
    case 'ambiguous':
      if (job.state !== 'generating') return REFUSE;
      // With a generation id (the 202 came) the service has it for sure: follow it.
      return { kind: 'effects', effects: [{ type: event.generationId ? 'follow' : 'reconcile' }] };
    case 'failed':
      if (isFinished(job.state)) return REFUSE;
      return move('failed', { error: event.error });
    case 'lost':
      if (job.state !== 'generating') return REFUSE;
      return move('failed', { error: { code: 'interrupted', message: INTERRUPTED_MESSAGE } });
    case 'saved':
      if (job.state !== 'downloading') return REFUSE;
      return { kind: 'update', patch: { downloads: event.downloads }, announce: false, effects: [] };
    case 'downloaded':
      return job.state === 'downloading' ? move('done', { downloads: event.downloads }) : REFUSE;
    default:
      return REFUSE;
  }
}

/** The creator's calls on a job. */
function userCall(job: Job, event: JobEvent): JobStep {
  switch (event.type) {
    case 'cancel': {
      if (isFinished(job.state)) return IGNORE;
      const remote: JobEffect[] = job.generationId ? [{ type: 'cancelRemote', generationId: job.generationId }] : [];
      return move(
        'canceled',
        { generationId: null },
        [{ type: 'stopRun' }, ...remote, { type: 'pump' }],
        'canceled by the user',
      );
    }
    case 'retry':
      if (job.state !== 'failed' && job.state !== 'canceled') return IGNORE;
      // A canceled job whose POST is still being answered (cancelGraceMs) has a run to end first.
      if (event.stopping) return { kind: 'conflict', message: 'This job is still stopping; retry it in a moment.' };
      return move(
        'queued',
        {
          error: null,
          notBefore: null,
          idempotencyKey: null,
          generationId: null,
          position: event.position,
          ...(event.result ? { result: event.result } : {}),
        },
        [{ type: 'pump' }],
        event.result ? 'recover' : 'retry',
      );
    case 'remove':
      if (!isFinished(job.state)) {
        return { kind: 'conflict', message: `This job is ${job.state}; cancel it first, then remove it.` };
      }
      return { kind: 'effects', effects: [{ type: 'forget' }] };
    case 'schedule':
      if (job.state !== 'queued') {
        return { kind: 'conflict', message: `This job is ${job.state}; only a queued job can be scheduled.` };
      }
      return {
        kind: 'update',
        patch: { submitAt: event.at },
        announce: true,
        // "Submit now" while waiting for the service: ask it now rather than at the next probe.
        effects: event.at === null ? [{ type: 'probeNow' }, { type: 'pump' }] : [{ type: 'pump' }],
      };
    case 'reorder':
      if (job.state !== 'queued' || job.position === event.position) return IGNORE;
      // Not announced one by one: the queue announces the new order once every position is written.
      return { kind: 'update', patch: { position: event.position }, announce: false, effects: [] };
    default:
      return REFUSE;
  }
}

/** After a restart: what the journal says the job was doing decides how it goes on. */
function restart(job: Job): JobStep {
  switch (job.state) {
    case 'uploading':
      return move('queued', {}, [], 'interrupted during upload');
    case 'generating':
      // Async mode: poll the generation the journal names; never submit it again.
      return { kind: 'effects', effects: [{ type: job.generationId ? 'follow' : 'reconcile' }] };
    case 'downloading':
      return { kind: 'effects', effects: [{ type: 'download' }] };
    default:
      return IGNORE;
  }
}

const USER_CALLS = new Set<JobEventType>(['cancel', 'retry', 'remove', 'schedule', 'reorder']);

/** The step for `event` on `job`. Pure; every move it returns is one `canTransition` allows. */
export function jobStep(job: Job, event: JobEvent, ctx: StepContext): JobStep {
  const step =
    event.type === 'launch'
      ? launch(job, ctx)
      : event.type === 'restart'
        ? restart(job)
        : USER_CALLS.has(event.type)
          ? userCall(job, event)
          : runAnswer(job, event, ctx);
  return step.kind === 'move' && !canTransition(job.state, step.to) ? REFUSE : step;
}
