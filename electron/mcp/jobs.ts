import type { IpcClient } from '../../shared/ipc/client.ts';
import type { Job, JobRequestInput } from '../../shared/ipc/schemas/jobs.ts';
import { ToolFailure, insideRoots, type SessionSpend } from './guardrails.ts';

/**
 * A generation as the tools answer it: the app's job (its id is the generation id an agent holds,
 * the same job the app's queue shows), and once done its media with their local files.
 */
export type GenerationView = {
  generation_id: string;
  status: Job['state'];
  /** The service's step while it renders (`queued`, `processing` …), when known. */
  step: string | null;
  /** USD: the routed price at submit, the charge once done. */
  price: number | null;
  provider: string | null;
  /** Why a queued job waits (a schedule, the service, a slot). */
  waiting: string | null;
  error: { code: string; message: string } | null;
  media: Array<{ media_id: string; path: string | null; sidecar_path: string | null }>;
};

const FINAL: ReadonlySet<Job['state']> = new Set(['done', 'failed', 'canceled']);

export function generationView(job: Job, roots: readonly string[]): GenerationView {
  const paths = job.result?.paths ?? [];
  return {
    generation_id: job.id,
    status: job.state,
    step: job.generation?.step ?? null,
    price: job.result?.price ?? job.route?.price ?? null,
    provider: job.route?.providerName ?? job.route?.providerId ?? null,
    waiting: job.hold?.message ?? null,
    error: job.error,
    media: (job.result?.itemIds ?? []).map((id, n) => {
      const file = paths[n] ? insideRoots(paths[n], roots) : null;
      return { media_id: id, path: file, sidecar_path: file ? `${file}.json` : null };
    }),
  };
}

/** What the request would cost under its routing mode, by the service's routing preview; null when unknown. */
export async function routedPrice(
  ipc: IpcClient,
  request: JobRequestInput,
  signal?: AbortSignal,
): Promise<number | null> {
  const preview = await ipc.compose.preview(request, signal ? { signal } : {});
  const row = preview.rows.find((r) => r.routing === preview.routing);
  if (row?.error) throw new ToolFailure(row.error.type, row.error.message);
  return row?.price ?? null;
}

/**
 * Submits a job to the app's queue, within the session's --max-spend and the profile's budgets.
 * The queue holds a job that would pass a budget (the app shows it "Over today's budget …" and lets
 * the creator submit it anyway); an agent has no one to ask, so such a job is taken back and the
 * call refused with the queue's own message, which names the cap.
 */
export async function submitWithinBudgets(
  ipc: IpcClient,
  request: JobRequestInput,
  spend: SessionSpend,
  signal?: AbortSignal,
): Promise<Job> {
  const price = await routedPrice(ipc, request, signal);
  spend.check(price);
  const submitted = await ipc.jobs.submit(request, signal ? { signal } : {});
  // The queue checks holds in the pass its enqueue scheduled, which has run by the next call.
  const job = await ipc.jobs.get({ id: submitted.id });
  if (job.state === 'queued' && job.hold?.reason === 'budget') {
    await ipc.jobs.cancel({ id: job.id }).catch(() => undefined);
    await ipc.jobs.remove({ id: job.id }).catch(() => undefined);
    throw new ToolFailure('budget_exceeded', `${job.hold.message}: the job was not submitted`);
  }
  spend.add(job.route?.price ?? price);
  return job;
}

export interface ProgressSink {
  (update: { progress: number; total: number; message: string }): Promise<void>;
}

/** 0..100 over the job's life: waiting, uploading the start frame, rendering, downloading. */
function percentOf(job: Job): number {
  switch (job.state) {
    case 'queued':
      return 0;
    case 'uploading':
      return 5;
    case 'generating':
      return 10 + 75 * (job.generation?.progress ?? 0);
    case 'downloading': {
      const d = job.download;
      return 85 + (d && d.total ? (14 * d.done) / d.total : 0);
    }
    default:
      return 100;
  }
}

function messageOf(job: Job): string {
  if (job.state === 'queued') return job.hold ? `waiting: ${job.hold.message}` : 'waiting in the queue';
  if (job.state === 'generating') {
    const pos = job.generation?.queuePosition;
    return `rendering${job.generation?.step ? ` (${job.generation.step}${pos ? `, #${pos} in line` : ''})` : ''}`;
  }
  return job.state;
}

/** Follows the job until it is final, reporting each step; resolves with the final job. */
export async function waitForJob(
  ipc: IpcClient,
  id: string,
  onProgress: ProgressSink | null,
  signal?: AbortSignal,
): Promise<Job> {
  const controller = new AbortController();
  signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const stream = await ipc.events.subscribe({ types: ['job.updated'] }, { signal: controller.signal });
  let last = -1;
  let lastMessage = '';
  const report = async (job: Job): Promise<void> => {
    if (!onProgress) return;
    const message = messageOf(job);
    const percent = Math.max(percentOf(job), last);
    // Progress must grow with each notification: an unchanged one is not sent again.
    if (percent === last && message === lastMessage) return;
    last = percent === last ? Math.min(99.99, last + 0.01) : percent;
    lastMessage = message;
    await onProgress({ progress: Math.round(last * 100) / 100, total: 100, message }).catch(() => undefined);
  };
  try {
    // Subscribed first: a job that finished in between is seen here.
    const now = await ipc.jobs.get({ id });
    await report(now);
    if (FINAL.has(now.state)) return now;
    for await (const event of stream) {
      if (event.type !== 'job.updated' || event.job.id !== id) continue;
      await report(event.job);
      if (FINAL.has(event.job.state)) return event.job;
    }
    throw new ToolFailure('canceled', 'The wait was stopped');
  } finally {
    controller.abort();
  }
}
