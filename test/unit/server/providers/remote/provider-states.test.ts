import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { ProviderAdapter, ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { outputsMayBePrivate } from '../../../../../server/providers/remote/download.ts';
import { falAdapter } from '../../../../../server/providers/remote/fal.ts';
import { googleAdapter } from '../../../../../server/providers/remote/google.ts';
import { lumaAdapter } from '../../../../../server/providers/remote/luma.ts';
import { runwayAdapter } from '../../../../../server/providers/remote/runway.ts';
import { replicateAdapter, statusOf } from '../../../../../server/providers/remote/replicate.ts';
import { runRemoteJob } from '../../../../../server/providers/remote/runner.ts';
import type { RunnerOptions } from '../../../../../server/providers/remote/runner.ts';
import { startFalFake } from '../../../../fakes/providers/fal.ts';
import { startGoogleFake } from '../../../../fakes/providers/google.ts';
import { startLumaFake } from '../../../../fakes/providers/luma.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import { startRunwayFake } from '../../../../fakes/providers/runway.ts';
import { startReplicateFake } from '../../../../fakes/providers/replicate.ts';
import type { FakeOptions, RunningFake } from '../../../../fakes/providers/types.ts';

/** States and behaviours of the real services the runner must handle (docs/providers.md, "How provider jobs run"). */

const FAST: RunnerOptions = {
  pollInitialMs: 5,
  pollMaxMs: 20,
  pollFactor: 2,
  jitter: 0,
  webhookPollMs: 60_000,
  timeoutMs: 60_000,
  maxPollErrors: 2,
  requestTimeoutMs: 5_000,
};

let dir: string;
let fake: RunningFake | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-states-'));
});
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await rm(dir, { recursive: true, force: true });
});

function task(path: string, durationSeconds: number): ProviderTask {
  return {
    kind: 'video',
    path,
    modelId: 'x/y:1',
    prompt: 'a lighthouse at dusk',
    size: '720p',
    width: 1280,
    height: 720,
    aspectRatio: '16:9',
    durationSeconds,
    count: 1,
    parameters: {},
    signal: new AbortController().signal,
  };
}

let frame: ProviderTask['startImage'];
beforeAll(async () => {
  const media = await fakeMedia();
  frame = { path: media.image.path, mime: 'image/png', bytes: (await stat(media.image.path)).size };
});

const CASES = {
  fal: { adapter: falAdapter, start: startFalFake, task: () => task('fal-ai/veo3/fast', 8) },
  replicate: { adapter: replicateAdapter, start: startReplicateFake, task: () => task('google/veo-3-fast', 8) },
  google: { adapter: googleAdapter, start: startGoogleFake, task: () => task('veo-3.0-fast-generate-001', 8) },
  runway: {
    adapter: runwayAdapter,
    start: startRunwayFake,
    task: () => ({ ...task('gen4_turbo', 5), startImage: frame }),
  },
  luma: { adapter: lumaAdapter, start: startLumaFake, task: () => task('ray-2', 5) },
} as const;
const ALL = ['fal', 'replicate', 'google', 'runway', 'luma'] as const;

async function run(
  which: keyof typeof CASES,
  options: FakeOptions,
  log: string[] = [],
): Promise<Awaited<ReturnType<typeof runRemoteJob>>> {
  const c = CASES[which];
  fake = await c.start({ pollsBeforeDone: 2, ...options });
  const adapter: ProviderAdapter = c.adapter;
  return runRemoteJob({
    adapter,
    settings: { apiKey: fake.key, baseUrl: fake.baseUrl },
    kind: 'video',
    count: 1,
    task: c.task(),
    deadline: Date.now() + 60_000,
    workDir: dir,
    signal: new AbortController().signal,
    download: {
      maxBytes: 100_000_000,
      stallMs: 2_000,
      attempts: 2,
      allowPrivate: outputsMayBePrivate(fake.baseUrl),
      lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    },
    options: FAST,
    log: (line) => log.push(line),
  });
}

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("Replicate's aborted predictions", () => {
  it('read as a failure that falls back, not a malformed answer', () => {
    const status = statusOf({ status: 'aborted', output: null, error: null });
    expect(status.status).toBe('failed');
    if (status.status === 'failed') {
      expect(status.error.errorClass).toBe('failed');
      expect(status.error.message).toContain('aborted');
    }
  });

  it('end the job as failed through the fake', async () => {
    const error = await rejection(run('replicate', { scenario: 'aborted' }));
    expect(error.errorClass).toBe('failed');
  });
});

describe('429 on status polls and result fetches is waited out', () => {
  for (const which of ALL) {
    it(`${which}: more 429s than tolerated poll errors, with Retry-After, still succeed`, async () => {
      const log: string[] = [];
      // Retry-After 0: the wait is the poll backoff's, so the test takes milliseconds.
      const result = await run(which, { pollRateLimits: FAST.maxPollErrors + 3, pollRetryAfter: 0 }, log);
      expect(result.masters).toHaveLength(1);
      const waits = log.filter((l) => l.includes('rate limiting polls'));
      expect(waits).toHaveLength(FAST.maxPollErrors + 3);
      expect(waits[0]).toMatch(/waiting [\d.]+ s \(its Retry-After\) before asking about job \S+ again/);
    });

    it(`${which}: 429s without Retry-After wait the poll backoff, and say so`, async () => {
      const log: string[] = [];
      const result = await run(which, { pollRateLimits: FAST.maxPollErrors + 2, pollRetryAfter: null }, log);
      expect(result.masters).toHaveLength(1);
      expect(log.some((l) => /waiting [\d.]+ s \(the poll backoff; it sent no Retry-After\)/.test(l))).toBe(true);
    });
  }
});

describe('an expired provider output', () => {
  for (const which of ['fal', 'replicate'] as const) {
    it(`${which}: fails as the provider's output expired, not as malformed`, async () => {
      const error = await rejection(run(which, { expiredOutputs: true }));
      expect(error.errorClass).toBe('expired');
      expect(error.message).toContain("the provider's output expired");
    });
  }
});
