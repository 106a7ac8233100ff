import type { NewJob } from '../../core/jobs/index.ts';
import type { Job, JobRequest, StartFrame } from '../../../shared/ipc/schemas/jobs.ts';
import { ipcError } from '../errors.ts';
import { queuePositions, toJob, toQueueStats } from '../mappers.ts';
import { v1Body } from '../job-body.ts';
import type { PathCheck } from '../path-grants.ts';
import { routeAtSubmit } from '../submit-route.ts';
import type { DomainHandlers, ServiceSession, SessionGetter } from '../types.ts';

/**
 * Where the queue gets a start or an end frame: a local file it uploads as the job's first step
 * (offline, the job waits for the service), or a URL the service fetches (the request's image_url,
 * end_image_url). A path passes the same check as uploads.fromPath; a library item gives its
 * downloaded image, else its URL.
 */
async function frameSource(
  s: ServiceSession,
  frame: StartFrame,
  checkPath: PathCheck,
): Promise<{ path: string } | { url: string }> {
  if (frame.kind === 'path') return { path: await checkPath(frame.path) };
  if (frame.kind === 'url' || frame.kind === 'upload') return { url: frame.url };
  const entry = s.library.get(frame.itemId);
  if (!entry) throw ipcError('not_found', `No library item ${frame.itemId}`);
  if (entry.downloadedPath && entry.item.media === 'image') return { path: entry.downloadedPath };
  return { url: entry.item.url };
}

type FrameSource = { path: string } | { url: string } | null;
const urlOf = (source: FrameSource): string | undefined => (source && 'url' in source ? source.url : undefined);
const pathOf = (source: FrameSource): string | null => (source && 'path' in source ? source.path : null);

/**
 * A job request is the v1 request plus the app's fields: the queue gets the v1 part as it is,
 * with the frames that have a URL in it, and the local ones as the files it uploads.
 */
async function enqueueInput(s: ServiceSession, r: JobRequest, checkPath: PathCheck): Promise<NewJob> {
  const start = r.startFrame ? await frameSource(s, r.startFrame, checkPath) : null;
  const end = r.endFrame ? await frameSource(s, r.endFrame, checkPath) : null;
  return {
    kind: r.kind,
    request: v1Body(r, urlOf(start), urlOf(end)),
    startFrame: pathOf(start),
    endFrame: pathOf(end),
    ...(r.variationOf ? { variationOf: r.variationOf } : {}),
  };
}

/**
 * The one submit path (docs/workflows.md, "The canvas"): Generate, ×N, Re-roll, Variations and
 * Extend all arrive here, through `jobs.submitBatch` (`jobs.submit` is the same with a count of
 * one). One job is an ordinary job; N jobs are a batch with consecutive seeds; `submitAt` holds
 * them until then; `parentItemId` joins the results to that item's shot chain.
 */
async function submitJobs(
  s: ServiceSession,
  request: JobRequest,
  count: number,
  submitAt: string | undefined,
  checkPath: PathCheck,
  now: () => number,
): Promise<{ jobs: Job[] }> {
  if (request.parentItemId && !s.library.get(request.parentItemId))
    throw ipcError('not_found', `No library item ${request.parentItemId} to continue`);
  const queued = await enqueueInput(s, request, checkPath);
  // A batch is routed as its jobs are sent: each with a seed.
  const routed = count > 1 ? { ...queued, request: { ...queued.request, seed: 0 } } : queued;
  const input = {
    ...queued,
    route: await routeAtSubmit(s, routed),
    ...(submitAt ? { submitAt: Date.parse(submitAt) } : {}),
  };
  const jobs =
    count === 1
      ? [s.queue.enqueue(input)]
      : s.queue.enqueueBatch(input, count, request.seed === undefined ? {} : { seed: request.seed });
  if (request.parentItemId) for (const j of jobs) s.library.chains.rememberJob(j.id, request.parentItemId);
  const positions = queuePositions(s.queue.list());
  return { jobs: jobs.map((j) => toJob(j, positions, now(), s.queue.progress(j.id))) };
}

export function jobsHandlers(session: SessionGetter, now: () => number, checkPath: PathCheck): DomainHandlers<'jobs'> {
  const one = async (id: string, act: (s: ServiceSession) => ReturnType<ServiceSession['queue']['get']>) => {
    const s = await session();
    const job = act(s);
    if (!job) throw ipcError('not_found', `No job ${id}, or it cannot do that in its current state.`);
    return toJob(job, queuePositions(s.queue.list()), now(), s.queue.progress(job.id));
  };
  const list = async (states?: readonly string[], limit?: number) => {
    const s = await session();
    const all = s.queue.list();
    const positions = queuePositions(all);
    const jobs = all
      .filter((j) => !states || states.includes(j.state))
      .map((j) => toJob(j, positions, now(), s.queue.progress(j.id)));
    return { jobs: limit ? jobs.slice(-limit) : jobs };
  };
  return {
    submit: async (input) => (await submitJobs(await session(), input, 1, undefined, checkPath, now)).jobs[0]!,
    submitBatch: async ({ request, count, submitAt }) =>
      submitJobs(await session(), request, count, submitAt, checkPath, now),
    list: (input) => list(input?.states, input?.limit),
    get: ({ id }) => one(id, (s) => s.queue.get(id)),
    cancel: ({ id }) => one(id, (s) => s.queue.cancel(id)),
    retry: ({ id }) => one(id, (s) => s.queue.retry(id)),
    duplicate: ({ id }) => one(id, (s) => s.queue.duplicate(id)),
    reorder: async ({ id, toIndex }) => {
      const s = await session();
      if (!s.queue.get(id)) throw ipcError('not_found', `No job ${id}`);
      s.queue.move(id, toIndex);
      return list(['queued']);
    },
    // A queued or running job throws JobConflictError (code 'conflict': "cancel it first").
    remove: async ({ id }) => {
      const s = await session();
      if (s.queue.remove(id) === null) throw ipcError('not_found', `No job ${id}`);
      return { ok: true as const };
    },
    pause: async () => {
      const s = await session();
      s.queue.pause();
      return toQueueStats(s.queue.stats(), now());
    },
    resume: async () => {
      const s = await session();
      s.queue.resume();
      return toQueueStats(s.queue.stats(), now());
    },
    stats: async () => toQueueStats((await session()).queue.stats(), now()),
    // docs/workflows.md: a job held by a budget starts this once; its hold is gone with the next pass.
    submitAnyway: async ({ id }) => {
      const s = await session();
      if (s.queue.get(id)?.state === 'queued') s.exemptFromBudget(id);
      // After the queue's next pass, so the answer is the job as started, not the held one.
      await new Promise((resolve) => setImmediate(resolve));
      return one(id, (current) => current.queue.get(id));
    },
    schedule: ({ id, at }) => one(id, (s) => s.queue.schedule(id, at === null ? null : Date.parse(at))),
  };
}
