import { describe, expect, it } from 'vitest';
import { canTransition, frameToUpload, JOB_STATES, jobStep } from '../../../../../electron/core/jobs/index.ts';
import type { Job, JobEvent, JobEventType, JobState, JobStep } from '../../../../../electron/core/jobs/index.ts';
import { coreJob } from '../../../../support/core-job.ts';

const T0 = Date.UTC(2026, 0, 1);
const CTX = { now: T0 + 1000, newKey: 'key-new', saves: true };
const RESULT = { items: [], price: 0.5 };

/** One event of each type, as the queue and its runs send them. */
const EVENTS: Record<JobEventType, JobEvent> = {
  launch: { type: 'launch' },
  uploaded: { type: 'uploaded', frame: 'start', url: 'https://cdn.example/frame.png' },
  accepted: { type: 'accepted', generationId: 'gen_1' },
  generated: { type: 'generated', result: RESULT },
  canceledOnService: { type: 'canceledOnService', detail: 'canceled on the service' },
  rateLimited: { type: 'rateLimited', waitMs: 30_000, message: 'slow down' },
  unreachable: { type: 'unreachable', message: 'ECONNREFUSED' },
  ambiguous: { type: 'ambiguous', generationId: null },
  failed: { type: 'failed', error: { code: 'provider_unavailable', message: 'down' } },
  lost: { type: 'lost' },
  saved: { type: 'saved', downloads: ['/a.mp4'] },
  downloaded: { type: 'downloaded', downloads: ['/a.mp4'] },
  cancel: { type: 'cancel' },
  retry: { type: 'retry', position: 9, stopping: false },
  remove: { type: 'remove' },
  schedule: { type: 'schedule', at: T0 + 60_000 },
  reorder: { type: 'reorder', position: 3 },
  restart: { type: 'restart' },
};

/**
 * What each event does in each state: `move:<to>`, `update`, `effects:<types>`, `ignore`,
 * `conflict` or `refuse`. Every pair is listed; a state an event names nowhere gets its `else`.
 */
const EXPECTED: Record<JobEventType, Partial<Record<JobState, string>> & { else: string }> = {
  launch: { queued: 'move:generating', else: 'refuse' },
  uploaded: { uploading: 'move:generating', canceled: 'effects:endRun', else: 'refuse' },
  accepted: { generating: 'update', canceled: 'effects:cancelRemote,abortRun', else: 'ignore' },
  generated: { generating: 'move:downloading', canceled: 'update', else: 'refuse' },
  canceledOnService: { generating: 'move:canceled', canceled: 'effects:endRun', else: 'refuse' },
  rateLimited: { generating: 'move:queued', canceled: 'effects:endRun', else: 'refuse' },
  unreachable: { uploading: 'move:queued', generating: 'move:queued', canceled: 'effects:endRun', else: 'refuse' },
  ambiguous: { generating: 'effects:reconcile', canceled: 'effects:endRun', else: 'refuse' },
  failed: {
    queued: 'move:failed',
    uploading: 'move:failed',
    generating: 'move:failed',
    downloading: 'move:failed',
    else: 'refuse',
  },
  lost: { generating: 'move:failed', canceled: 'effects:endRun', else: 'refuse' },
  saved: { downloading: 'update', canceled: 'effects:endRun', else: 'refuse' },
  downloaded: { downloading: 'move:done', canceled: 'effects:endRun', else: 'refuse' },
  cancel: {
    queued: 'move:canceled',
    uploading: 'move:canceled',
    generating: 'move:canceled',
    downloading: 'move:canceled',
    else: 'ignore',
  },
  retry: { failed: 'move:queued', canceled: 'move:queued', else: 'ignore' },
  remove: { done: 'effects:forget', failed: 'effects:forget', canceled: 'effects:forget', else: 'conflict' },
  schedule: { queued: 'update', else: 'conflict' },
  reorder: { queued: 'update', else: 'ignore' },
  restart: {
    uploading: 'move:queued',
    generating: 'effects:reconcile',
    downloading: 'effects:download',
    else: 'ignore',
  },
};

function summary(step: JobStep): string {
  if (step.kind === 'move') return `move:${step.to}`;
  if (step.kind === 'effects') return `effects:${step.effects.map((e) => e.type).join(',')}`;
  return step.kind;
}

const jobIn = (state: JobState, over: Partial<Job> = {}): Job => coreJob('j1', T0, { state, ...over });

describe('the job state machine', () => {
  it('answers every event in every state as the table says, and only with allowed transitions', () => {
    for (const type of Object.keys(EVENTS) as JobEventType[]) {
      for (const state of JOB_STATES) {
        const job = jobIn(state);
        const step = jobStep(job, EVENTS[type], CTX);
        expect(`${type} in ${state}: ${summary(step)}`).toBe(
          `${type} in ${state}: ${EXPECTED[type][state] ?? EXPECTED[type].else}`,
        );
        if (step.kind === 'move') expect(canTransition(state, step.to)).toBe(true);
      }
    }
  });

  it('is pure: the job is not changed and the same input gives the same step', () => {
    for (const event of Object.values(EVENTS)) {
      for (const state of JOB_STATES) {
        const job = jobIn(state, { generationId: 'gen_0' });
        const copy = structuredClone(job);
        expect(jobStep(job, event, CTX)).toEqual(jobStep(copy, event, CTX));
        expect(job).toEqual(copy);
      }
    }
  });

  it('launches a queued job into its first step: download again, upload the start frame, or submit', () => {
    expect(summary(jobStep(jobIn('queued', { result: RESULT }), EVENTS.launch, CTX))).toBe('move:downloading');
    const upload = jobStep(jobIn('queued', { startFrame: '/f.png', notBefore: T0 }), EVENTS.launch, CTX);
    expect(upload).toMatchObject({ to: 'uploading', patch: { notBefore: null }, effects: [{ type: 'upload' }] });
    // A start frame already uploaded (image_url set) is not uploaded again.
    const withUrl = jobIn('queued', { startFrame: '/f.png', request: { model: 'm', prompt: 'p', image_url: 'u' } });
    expect(summary(jobStep(withUrl, EVENTS.launch, CTX))).toBe('move:generating');
  });

  it('uploads the start frame, then the end frame, writing each URL into the request as it comes, then submits', () => {
    const both = jobIn('queued', { startFrame: '/s.png', endFrame: '/e.png' });
    expect(frameToUpload(both)).toEqual({ frame: 'start', path: '/s.png' });
    expect(jobStep(both, EVENTS.launch, CTX)).toMatchObject({ to: 'uploading', effects: [{ type: 'upload' }] });
    // The start frame's URL is written at once, and the run goes on to the end frame: no submit yet.
    const first = jobStep({ ...both, state: 'uploading' }, { type: 'uploaded', frame: 'start', url: 'u-start' }, CTX);
    expect(first).toEqual({
      kind: 'update',
      patch: { request: { ...both.request, image_url: 'u-start' } },
      announce: false,
      effects: [{ type: 'upload' }],
    });
    const half = { ...both, state: 'uploading' as const, request: { ...both.request, image_url: 'u-start' } };
    expect(frameToUpload(half)).toEqual({ frame: 'end', path: '/e.png' });
    const second = jobStep(half, { type: 'uploaded', frame: 'end', url: 'u-end' }, CTX);
    expect(second).toMatchObject({
      to: 'generating',
      patch: { request: { image_url: 'u-start', end_image_url: 'u-end' }, idempotencyKey: 'key-new' },
      effects: [{ type: 'submit' }],
    });
  });

  it('uploads only what has no URL yet: a start frame already up leaves the end frame, both up leaves none', () => {
    const startUp = jobIn('queued', {
      startFrame: '/s.png',
      endFrame: '/e.png',
      request: { model: 'm', prompt: 'p', image_url: 'u-start' },
    });
    expect(frameToUpload(startUp)).toEqual({ frame: 'end', path: '/e.png' });
    expect(summary(jobStep(startUp, EVENTS.launch, CTX))).toBe('move:uploading');
    const bothUp = { ...startUp, request: { ...startUp.request, end_image_url: 'u-end' } };
    expect(frameToUpload(bothUp)).toBeNull();
    expect(summary(jobStep(bothUp, EVENTS.launch, CTX))).toBe('move:generating');
    // An end frame given as a URL (end_image_url set at submit) with a local start frame: only the start goes up.
    const endByUrl = jobIn('queued', {
      startFrame: '/s.png',
      request: { model: 'm', prompt: 'p', end_image_url: 'https://e.com/end.png' },
    });
    expect(frameToUpload(endByUrl)).toEqual({ frame: 'start', path: '/s.png' });
    const only = jobStep({ ...endByUrl, state: 'uploading' }, EVENTS.uploaded, CTX);
    expect(only).toMatchObject({ to: 'generating', patch: { request: { end_image_url: 'https://e.com/end.png' } } });
  });

  it('after a restart mid-upload, a start frame whose URL the journal has is not uploaded again', () => {
    const interrupted = jobIn('uploading', {
      startFrame: '/s.png',
      endFrame: '/e.png',
      request: { model: 'm', prompt: 'p', image_url: 'u-start' },
    });
    expect(summary(jobStep(interrupted, EVENTS.restart, CTX))).toBe('move:queued');
    const requeued = { ...interrupted, state: 'queued' as const };
    expect(jobStep(requeued, EVENTS.launch, CTX)).toMatchObject({ to: 'uploading', effects: [{ type: 'upload' }] });
    expect(frameToUpload(requeued)).toEqual({ frame: 'end', path: '/e.png' });
  });

  it('writes the key and submit time before the request goes out, and keeps both when the job comes back', () => {
    const fresh = jobStep(
      jobIn('queued', { attempts: 1, error: { code: 'timeout', message: 't' } }),
      EVENTS.launch,
      CTX,
    );
    expect(fresh).toMatchObject({
      to: 'generating',
      patch: { idempotencyKey: 'key-new', submittedAt: CTX.now, attempts: 2, notBefore: null, error: null },
      effects: [{ type: 'submit' }],
    });
    const back = jobStep(jobIn('queued', { idempotencyKey: 'key-old', submittedAt: T0 }), EVENTS.launch, CTX);
    expect(back).toMatchObject({ patch: { idempotencyKey: 'key-old', submittedAt: T0 } });
    const uploaded = jobStep(jobIn('uploading', { startFrame: '/f.png' }), EVENTS.uploaded, CTX);
    expect(uploaded).toMatchObject({ patch: { request: { image_url: 'https://cdn.example/frame.png' } } });
  });

  it('ends a generation in a download when results are saved, else done, and keeps a canceled job’s charge', () => {
    const route = { routing: 'optimal' as const, providerId: 'p', providerName: null, price: 0.5, dropped: [] };
    const event: JobEvent = { type: 'generated', result: RESULT, route };
    expect(jobStep(jobIn('generating', { idempotencyKey: 'k', generationId: 'g' }), event, CTX)).toMatchObject({
      to: 'downloading',
      patch: { result: RESULT, idempotencyKey: null, generationId: null, route },
      effects: [{ type: 'download' }],
    });
    expect(summary(jobStep(jobIn('generating'), event, { ...CTX, saves: false }))).toBe('move:done');
    expect(jobStep(jobIn('canceled'), event, CTX)).toEqual({
      kind: 'update',
      patch: { result: RESULT, route },
      announce: true,
      effects: [{ type: 'endRun' }],
    });
  });

  it('sends a job back to the queue on a 429 (new key later) or an unreachable service (key kept)', () => {
    expect(jobStep(jobIn('generating', { idempotencyKey: 'k' }), EVENTS.rateLimited, CTX)).toMatchObject({
      to: 'queued',
      patch: { notBefore: CTX.now + 30_000, idempotencyKey: null, generationId: null },
      detail: 'rate limited: slow down',
    });
    const away = jobStep(jobIn('generating', { idempotencyKey: 'k' }), EVENTS.unreachable, CTX);
    expect(away).toMatchObject({ to: 'queued', before: [{ type: 'goOffline' }] });
    expect(away.kind === 'move' && 'idempotencyKey' in away.patch).toBe(false);
  });

  it('follows a generation it knows of and reconciles one it does not', () => {
    const known = jobStep(jobIn('generating'), { type: 'ambiguous', generationId: 'gen_1' }, CTX);
    expect(summary(known)).toBe('effects:follow');
    expect(summary(jobStep(jobIn('generating', { generationId: 'g' }), EVENTS.restart, CTX))).toBe('effects:follow');
    expect(jobStep(jobIn('generating'), EVENTS.lost, CTX)).toMatchObject({
      to: 'failed',
      patch: { error: { code: 'interrupted' } },
    });
  });

  it('cancels on the service a generation it knows, and refuses a retry while the run still stops', () => {
    expect(jobStep(jobIn('generating', { generationId: 'g' }), EVENTS.cancel, CTX)).toMatchObject({
      to: 'canceled',
      patch: { generationId: null },
      effects: [{ type: 'stopRun' }, { type: 'cancelRemote', generationId: 'g' }, { type: 'pump' }],
    });
    expect(summary(jobStep(jobIn('canceled'), { type: 'retry', position: 1, stopping: true }, CTX))).toBe('conflict');
    expect(
      jobStep(jobIn('failed'), { type: 'retry', position: 4, result: RESULT, stopping: false }, CTX),
    ).toMatchObject({ to: 'queued', patch: { position: 4, result: RESULT, idempotencyKey: null }, detail: 'recover' });
    expect(jobStep(jobIn('queued'), { type: 'schedule', at: null }, CTX)).toMatchObject({
      effects: [{ type: 'probeNow' }, { type: 'pump' }],
    });
    expect(summary(jobStep(jobIn('queued', { position: 3 }), EVENTS.reorder, CTX))).toBe('ignore');
  });
});
