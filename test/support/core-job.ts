import type { Job } from '../../electron/core/jobs/index.ts';

/**
 * A job as the core's queue and journal hold it, for unit tests: a queued video of
 * `clipdesk/motion` prompted with its id, created and last updated at `at`, never sent. Each test
 * gives what it is about in `over`.
 */
export function coreJob(id: string, at: number, over: Partial<Job> = {}): Job {
  return {
    id,
    kind: 'video',
    state: 'queued',
    request: { model: 'clipdesk/motion', prompt: id },
    startFrame: null,
    endFrame: null,
    position: 0,
    idempotencyKey: null,
    submittedAt: null,
    attempts: 0,
    notBefore: null,
    submitAt: null,
    error: null,
    result: null,
    downloads: [],
    batchId: null,
    generationId: null,
    variationOf: null,
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}
