import { isProviderError, ProviderError } from './contract.ts';
import type { AdapterSettings, JobStatus, ProviderAdapter, ProviderTask, SubmittedJob } from './contract.ts';
import { fetchOutput } from './download.ts';
import type { DownloadPolicy, MasterFile } from './download.ts';
import { sleep } from './webhooks.ts';
import type { Wake, WebhookHub } from './webhooks.ts';

/** How the runner waits. Defaults suit real providers; tests pass milliseconds. */
export interface RunnerOptions {
  /**
   * First wait before a poll; grows by `pollFactor` up to `pollMaxMs`. Default 5 000: a video job
   * takes tens of seconds to minutes, and Runway asks for no more than one poll per 5 s. An image
   * job waits at most IMAGE_FIRST_POLL_MS first, since images often take a few seconds.
   */
  pollInitialMs: number;
  /** Default 30 000. */
  pollMaxMs: number;
  /** Default 1.5. */
  pollFactor: number;
  /** Each wait is spread ±this fraction, so many jobs do not poll in step. Default 0.2. */
  jitter: number;
  /** With a webhook: the slow safety poll in case a delivery is lost. Default 60 000. */
  webhookPollMs: number;
  /** A job not done by then is canceled at the provider ('timeout'). Default 15 min. */
  timeoutMs: number;
  /** Transient poll failures (5xx, network, 429) in a row tolerated before giving up. Default 5. */
  maxPollErrors: number;
  /** One poll or submit call. Default 60 000. */
  requestTimeoutMs: number;
}

export const IMAGE_FIRST_POLL_MS = 1_000;

export const DEFAULT_RUNNER_OPTIONS: RunnerOptions = {
  pollInitialMs: 5_000,
  pollMaxMs: 30_000,
  pollFactor: 1.5,
  jitter: 0.2,
  webhookPollMs: 60_000,
  timeoutMs: 15 * 60_000,
  maxPollErrors: 5,
  requestTimeoutMs: 60_000,
};

export interface RemoteJobRun {
  adapter: ProviderAdapter;
  settings: AdapterSettings;
  kind: 'video' | 'image';
  /** Outputs wanted (images per request; 1 for video): more are ignored. */
  count: number;
  /** A new job: submitted, then handed to `submitted` before any wait. */
  task?: ProviderTask;
  /** A job submitted before a restart: polled, never submitted again. */
  job?: SubmittedJob;
  /** Persists the job (its provider id and state) so that a restart can resume it; awaited before any wait. */
  submitted?: (job: SubmittedJob) => unknown;
  /** Epoch ms by which the job must be done; then it is canceled at the provider. */
  deadline: number;
  /** Where the master files go. */
  workDir: string;
  /**
   * The service's lifetime: when it aborts the wait stops but the job is NOT canceled at the
   * provider, since it resumes after the restart.
   */
  signal: AbortSignal;
  download: DownloadPolicy;
  options: RunnerOptions;
  webhooks?: WebhookHub;
  log?: (message: string) => void;
  /** Each status the provider reports (asynchronous generations show queue position and progress). */
  onStatus?: (status: JobStatus) => void;
}

export interface RemoteJobResult {
  job: SubmittedJob;
  masters: MasterFile[];
  /** USD the provider reports it charged, when its API says. */
  cost?: number;
  /** Tokens by kind the provider reports, when it bills tokens (priced by the offer's token lines). */
  usage?: Extract<JobStatus, { status: 'succeeded' }>['usage'];
  polls: number;
}

/**
 * One remote job from submit (or resume) to master files: submit → persist → wait (polling with
 * exponential backoff and jitter, honouring the provider's Retry-After, or woken by a webhook with a
 * slow safety poll) → download and check each output. Throws ProviderError; a timeout cancels the
 * job at the provider first.
 */
export async function runRemoteJob(run: RemoteJobRun): Promise<RemoteJobResult> {
  const { adapter, settings, options } = run;
  const hub = webhookHub(run);
  let job = run.job;
  if (!job) {
    if (!run.task) throw new Error('runRemoteJob needs a task or a job');
    const task = run.task;
    const limited = AbortSignal.any([task.signal, AbortSignal.timeout(options.requestTimeoutMs)]);
    // A delivery may beat the submit's answer: the hub keeps unknown ids meanwhile (webhooks.ts).
    const submitted = hub?.submitStarted(adapter.id);
    try {
      job = await call(adapter, run.signal, () => adapter.submit(settings, { ...task, signal: limited }));
    } finally {
      submitted?.();
    }
  }
  const unwatch = hub?.watch(adapter.id, job.id);
  try {
    if (!run.job) await run.submitted?.(job);
    const { status, polls } = await waitForJob(run, job, run.job !== undefined);
    if (status.outputs.length === 0) {
      throw new ProviderError(adapter.id, 'malformed', `${adapter.name} reported success with no output`);
    }
    const masters: MasterFile[] = [];
    for (const [i, output] of status.outputs.slice(0, run.count).entries()) {
      masters.push(await fetchOutput(adapter.id, output, run.kind, run.workDir, i, run.download, run.signal));
    }
    return { job, masters, cost: status.cost, ...(status.usage ? { usage: status.usage } : {}), polls };
  } finally {
    unwatch?.();
  }
}

/** The hub that wakes this run's waits, when its provider was asked for webhooks. */
function webhookHub(run: RemoteJobRun): WebhookHub | undefined {
  return run.settings.webhookUrl !== undefined && run.adapter.webhooks ? run.webhooks : undefined;
}

type Succeeded = Extract<JobStatus, { status: 'succeeded' }>;

async function waitForJob(
  run: RemoteJobRun,
  job: SubmittedJob,
  resumed: boolean,
): Promise<{ status: Succeeded; polls: number }> {
  const { adapter, settings, options, signal, deadline } = run;
  if (job.done) return { status: job.done, polls: 0 };
  const webhook = webhookHub(run);
  let delay = run.kind === 'image' ? Math.min(options.pollInitialMs, IMAGE_FIRST_POLL_MS) : options.pollInitialMs;
  let errors = 0;
  let polls = 0;
  // A resumed job may have finished while the service was down: ask at once.
  let status: JobStatus | undefined;
  let first = !resumed;
  for (;;) {
    if (status) {
      run.onStatus?.(status);
      if (status.status === 'succeeded') return { status, polls };
      if (status.status === 'failed') throw status.error;
      if (status.status === 'canceled')
        throw new ProviderError(adapter.id, 'canceled', `${adapter.name} reports the job was canceled`);
    }
    if (status || first) {
      first = false;
      let wait = webhook ? options.webhookPollMs : jittered(delay, options.jitter);
      delay = Math.min(delay * options.pollFactor, options.pollMaxMs);
      const hint = status && 'retryAfterSeconds' in status ? status.retryAfterSeconds : undefined;
      if (hint !== undefined && hint * 1000 > wait) wait = hint * 1000;
      const remaining = deadline - Date.now();
      if (remaining <= 0) return timeout(run, job);
      const wake: Wake = webhook
        ? await webhook.sleep(adapter.id, job.id, Math.min(wait, remaining), signal)
        : await sleep(Math.min(wait, remaining), signal);
      if (wake.status) {
        status = wake.status;
        continue;
      }
      if (!wake.woken && Date.now() >= deadline) return timeout(run, job);
    }
    try {
      polls++;
      status = await call(adapter, signal, () =>
        adapter.poll(settings, job, AbortSignal.any([signal, AbortSignal.timeout(options.requestTimeoutMs)])),
      );
      errors = 0;
    } catch (error) {
      if (signal.aborted) throw error;
      // A 429 on a poll or a result fetch is the provider asking us to slow down, not news about
      // the job: it is waited out (its Retry-After, else the poll backoff), bounded by the job's
      // deadline, and never counts as a failure. Other transient failures are tolerated a few times.
      const limited = isProviderError(error) && error.errorClass === 'rate_limited';
      const transient = limited || (isProviderError(error) && error.errorClass === 'server');
      if (!transient || (!limited && ++errors > options.maxPollErrors)) throw error;
      const waitSeconds = Math.max(error.retryAfterSeconds ?? 0, delay / 1000);
      run.log?.(
        limited
          ? `${adapter.name} is rate limiting polls (HTTP 429): waiting ${formatSeconds(waitSeconds)} s ` +
              `(${error.retryAfterSeconds === undefined ? 'the poll backoff; it sent no Retry-After' : 'its Retry-After'}) ` +
              `before asking about job ${job.id} again, at most until the job's deadline`
          : `${adapter.name}: polling job ${job.id} failed (${error.message}); polling again in ${formatSeconds(waitSeconds)} s`,
      );
      status = { status: 'running', retryAfterSeconds: error.retryAfterSeconds };
    }
  }
}

/** Past the deadline: cancel at the provider (best effort), then fail with 'timeout'. */
async function timeout(run: RemoteJobRun, job: SubmittedJob): Promise<never> {
  const { adapter, settings, options } = run;
  try {
    await adapter.cancel(settings, job, AbortSignal.timeout(options.requestTimeoutMs));
  } catch (error) {
    run.log?.(`${adapter.name}: canceling timed-out job ${job.id} failed (${describe(error)})`);
  }
  throw new ProviderError(
    adapter.id,
    'timeout',
    `${adapter.name} did not finish within ${Math.round(options.timeoutMs / 1000)} s; the job was canceled at the provider`,
  );
}

/**
 * An adapter call whose other failures (a bug, an SDK surprise, a call that took longer than
 * `requestTimeoutMs`) count as 'server'; on shutdown the failure passes as it is.
 */
async function call<T>(adapter: ProviderAdapter, shutdown: AbortSignal, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isProviderError(error) || shutdown.aborted) throw error;
    throw new ProviderError(adapter.id, 'server', `${adapter.name} call failed (${describe(error)})`, { cause: error });
  }
}

function formatSeconds(seconds: number): string {
  return seconds >= 10 ? String(Math.round(seconds)) : seconds.toFixed(1).replace(/\.0$/, '');
}

function jittered(ms: number, jitter: number): number {
  return Math.max(0, ms * (1 + jitter * (Math.random() * 2 - 1)));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
