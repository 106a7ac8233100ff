// What every adapter's test against its provider's contract fake needs: a task as the service hands
// it over, the ProviderError a call fails with, and a job polled to its end.
import { expect } from 'vitest';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderTask,
  SubmittedJob,
} from '../../../../../server/providers/remote/contract.ts';

/** A task for the model at `path`: a 5 s 720p 16:9 video unless `overrides` say otherwise. */
export function providerTask(overrides: Partial<ProviderTask> & Pick<ProviderTask, 'path' | 'modelId'>): ProviderTask {
  return {
    kind: 'video',
    prompt: 'a lighthouse at dusk',
    size: '720p',
    width: 1280,
    height: 720,
    aspectRatio: '16:9',
    durationSeconds: 5,
    count: 1,
    parameters: {},
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** The ProviderError `promise` rejects with; the test fails if it resolves or throws anything else. */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

/** Polls until the job leaves queued/running, or `max` polls (the fakes move one step per poll). */
export async function pollToEnd(
  adapter: ProviderAdapter,
  settings: AdapterSettings,
  job: SubmittedJob,
  max = 20,
): Promise<{ statuses: JobStatus[]; seen: string[]; last: JobStatus; polls: number }> {
  const statuses: JobStatus[] = [];
  do statuses.push(await adapter.poll(settings, job, new AbortController().signal));
  while (statuses.length < max && ['queued', 'running'].includes(statuses.at(-1)!.status));
  return { statuses, seen: statuses.map((s) => s.status), last: statuses.at(-1)!, polls: statuses.length };
}
