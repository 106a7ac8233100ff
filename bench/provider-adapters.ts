import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CONTENT_LIMITS } from '../shared/api/index.ts';
import type {
  JobStatus,
  ProviderAdapter,
  ProviderTask,
  RemoteProviderId,
  SubmittedJob,
} from '../server/providers/remote/contract.ts';
import { ADAPTERS } from '../server/providers/remote/adapters.ts';
import { runRemoteJob } from '../server/providers/remote/runner.ts';
import type { RunnerOptions } from '../server/providers/remote/runner.ts';
import { defaultHostLookup } from '../server/net/host-lookup.ts';
import { fakeMedia } from '../test/fakes/providers/media.ts';
import { startFalFake } from '../test/fakes/providers/fal.ts';
import { startGoogleFake } from '../test/fakes/providers/google.ts';
import { startLumaFake } from '../test/fakes/providers/luma.ts';
import { startOpenAIFake } from '../test/fakes/providers/openai.ts';
import { startReplicateFake } from '../test/fakes/providers/replicate.ts';
import { startRunwayFake } from '../test/fakes/providers/runway.ts';
import type { FakeOptions, RunningFake } from '../test/fakes/providers/types.ts';
import { reportFigure } from './support/report.ts';

/**
 * Adapter overhead (docs/providers.md): one generation through each provider's contract fake, as the
 * service runs it (runner: submit → persist → poll with the service's schedule → download with
 * Range resume, sniff and ffprobe check) against a bare loop of the same SDK calls with the same
 * poll schedule (submit → sleep → poll → plain fetch into a file, no checks). Goal ≤ 1.05× wall time.
 * The comparator calls the SDKs through the adapters' own submit/poll (a field mapping of
 * microseconds), so the ratio is what the service adds around the SDK.
 */
const POLL_MS = 150;
const POLLS = 2;
const ROUNDS = 7;

const FAKES: Record<RemoteProviderId, (o: FakeOptions) => Promise<RunningFake>> = {
  fal: startFalFake,
  replicate: startReplicateFake,
  google: startGoogleFake,
  runway: startRunwayFake,
  luma: startLumaFake,
  openai: startOpenAIFake,
};
/** A model path of each provider, and whether it needs a start frame. */
const PATHS: Record<RemoteProviderId, { path: string; kind: 'video' | 'image'; duration: number }> = {
  fal: { path: 'fal-ai/kling-video/v2.1/master/text-to-video', kind: 'video', duration: 5 },
  replicate: { path: 'google/veo-3-fast', kind: 'video', duration: 8 },
  google: { path: 'veo-3.0-fast-generate-001', kind: 'video', duration: 8 },
  runway: { path: 'gen4_turbo', kind: 'video', duration: 5 },
  luma: { path: 'ray-flash-2', kind: 'video', duration: 5 },
  openai: { path: 'gpt-image-1', kind: 'image', duration: 0 },
};

const OPTIONS: RunnerOptions = {
  pollInitialMs: POLL_MS,
  pollMaxMs: POLL_MS,
  pollFactor: 1,
  jitter: 0,
  webhookPollMs: 60_000,
  timeoutMs: 60_000,
  maxPollErrors: 5,
  requestTimeoutMs: 30_000,
};

export default async function (): Promise<void> {
  const media = await fakeMedia();
  const scratch = await mkdtemp(join(tmpdir(), 'clipdesk-bench-adapters-'));
  const startImage = { path: media.image.path, mime: media.image.mime, bytes: (await stat(media.image.path)).size };
  try {
    for (const id of Object.keys(FAKES) as RemoteProviderId[]) {
      const adapter = ADAPTERS[id];
      if (!adapter) throw new Error(`no adapter registered for ${id}`);
      // OpenAI answers synchronously: its fake's `slow` answers after POLLS × 150 ms, the same
      // generation time the others' poll schedule gives (a real image takes seconds).
      const fake = await FAKES[id]({ pollsBeforeDone: POLLS, ...(id === 'openai' ? { scenario: 'slow' } : {}) });
      const settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
      const { path, kind, duration } = PATHS[id];
      const task = (): ProviderTask => ({
        kind,
        path,
        modelId: `bench/${id}`,
        prompt: 'a paper boat on a calm lake',
        size: kind === 'video' ? '720p' : '1024x1024',
        width: kind === 'video' ? 1280 : 1024,
        height: kind === 'video' ? 720 : 1024,
        aspectRatio: kind === 'video' ? '16:9' : '1:1',
        durationSeconds: duration,
        count: 1,
        // Gen-4 Turbo is image-to-video only.
        ...(id === 'runway' ? { startImage } : {}),
        parameters: {},
        signal: new AbortController().signal,
      });
      try {
        const ours: number[] = [];
        const bare: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const dir = await mkdtemp(join(scratch, `${id}-`));
          // Alternate which side goes first, so drift on the machine lands on both.
          const sides = [
            async () => ours.push(await timed(() => viaRunner(adapter, settings, task(), kind, dir))),
            async () => bare.push(await timed(() => bareLoop(adapter, settings, task(), dir))),
          ];
          if (round % 2 === 1) sides.reverse();
          for (const side of sides) await side();
        }
        const oursMs = median(ours);
        const bareMs = median(bare);
        reportFigure(
          `provider-adapter-${id}`,
          oursMs,
          'ms',
          oursMs / bareMs,
          `bare SDK submit → poll → download loop, same ${POLL_MS} ms poll schedule (goal ≤ 1.05)`,
        );
      } finally {
        await fake.close();
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function viaRunner(
  adapter: ProviderAdapter,
  settings: { apiKey: string; baseUrl: string },
  task: ProviderTask,
  kind: 'video' | 'image',
  dir: string,
): Promise<unknown> {
  const persisted: SubmittedJob[] = [];
  return runRemoteJob({
    adapter,
    settings,
    kind,
    count: 1,
    task,
    submitted: (job) => persisted.push(job),
    deadline: Date.now() + 60_000,
    workDir: dir,
    signal: new AbortController().signal,
    download: {
      maxBytes: kind === 'video' ? CONTENT_LIMITS.uploadVideoBytes : CONTENT_LIMITS.uploadImageBytes,
      stallMs: 30_000,
      attempts: 3,
      allowPrivate: true,
      lookup: defaultHostLookup,
    },
    options: OPTIONS,
  });
}

/** The same SDK calls in the plainest loop: no persistence, no jitter, no checks. */
async function bareLoop(
  adapter: ProviderAdapter,
  settings: { apiKey: string; baseUrl: string },
  task: ProviderTask,
  dir: string,
): Promise<void> {
  const signal = new AbortController().signal;
  const job = await adapter.submit(settings, task);
  let status: JobStatus | undefined = job.done;
  while (status?.status !== 'succeeded') {
    await new Promise((r) => setTimeout(r, POLL_MS));
    status = await adapter.poll(settings, job, signal);
    if (status.status === 'failed' || status.status === 'canceled') throw new Error(`job ${status.status}`);
  }
  const output = status.outputs[0];
  if (!output) throw new Error('no output');
  const file = join(dir, 'bare-output');
  if ('data' in output) {
    await pipeline(Readable.from([output.data]), createWriteStream(file));
    return;
  }
  const res = await fetch(output.url, { headers: output.headers });
  if (!res.ok || !res.body) throw new Error(`download answered ${res.status}`);
  await pipeline(Readable.fromWeb(res.body as never), createWriteStream(file));
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}
