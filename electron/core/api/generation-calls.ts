/** The client's generation calls: submit (202 or 200), follow by polling, read, list, cancel. */
import { z } from 'zod';
import {
  GenerationAccepted,
  GenerationListResponse,
  GenerationRecordResponse,
  GenerationResponse,
  LegacyGenerationAccepted,
} from '../../../shared/api/index.ts';
import type { Generation, GenerationStatus } from '../../../shared/api/index.ts';
import type {
  ApiClient,
  FollowedGenerationOptions,
  GenerationOperation,
  GenerationOptions,
  RequestOptions,
} from './client-types.ts';
import { ServiceError } from './errors.ts';
import { generationResult, pollDelay } from './generations.ts';
import type { GenerationStart } from './generations.ts';
import { pageQuery } from './records.ts';
import { call, deadline, read } from './transport.ts';
import type { Transport } from './transport.ts';

const OPERATION_PATHS: Record<GenerationOperation, string> = {
  'videos.generations': '/videos/generations',
  'images.generations': '/images/generations',
  'videos.variations': '/videos/variations',
};

const FINAL = new Set<GenerationStatus>(['succeeded', 'failed', 'canceled']);

export type GenerationCalls = Pick<
  ApiClient,
  | 'generateVideo'
  | 'generateImage'
  | 'createVariations'
  | 'submitGeneration'
  | 'getGeneration'
  | 'cancelGeneration'
  | 'listGenerations'
  | 'waitForGeneration'
>;

function submit(
  t: Transport,
  operation: GenerationOperation,
  input: unknown,
  opts: GenerationOptions,
): Promise<GenerationStart> {
  return call<GenerationStart>(t, {
    method: 'POST',
    path: OPERATION_PATHS[operation],
    body: input,
    // RFC 7240: a service without asynchronous mode ignores the preference and answers 200.
    headers: { prefer: 'respond-async' },
    idempotencyKey: opts.idempotencyKey,
    schema: GenerationResponse.transform((response) => ({ async: false as const, response })),
    schemaFor: (status) =>
      status === 202
        ? z
            .union([
              GenerationAccepted.transform((body) => body.result),
              LegacyGenerationAccepted.transform((body) => body.data),
            ])
            .transform((generation) => ({ async: true as const, generation }))
        : GenerationResponse.transform((response) => ({ async: false as const, response })),
    retryServerErrors: false,
    options: opts,
    defaultTimeoutMs: undefined,
  });
}

/** A generation's status: free of the rate limits (docs/api.md), so a spent window never delays a poll. */
function getGeneration(t: Transport, id: string, opts: RequestOptions | undefined): Promise<Generation> {
  return read(t, `/generations/${encodeURIComponent(id)}`, GenerationRecordResponse, opts, undefined, false).then(
    (r) => r.result,
  );
}

/** Polls `GET /generations/:id` with backoff until it is final; each change goes to onUpdate. */
async function waitFor(
  t: Transport,
  id: string,
  opts: RequestOptions & { onUpdate?: (generation: Generation) => void } = {},
): Promise<Generation> {
  const { signal } = deadline(opts, undefined);
  let last = '';
  let unchanged = 0;
  for (;;) {
    const generation = await getGeneration(t, id, { ...opts, timeoutMs: opts.timeoutMs ?? t.defaultTimeoutMs });
    const seen = `${generation.status}|${generation.queuePosition ?? ''}|${generation.progress ?? ''}`;
    if (seen !== last) {
      last = seen;
      unchanged = 0;
      opts.onUpdate?.(generation);
    } else unchanged++;
    if (FINAL.has(generation.status)) return generation;
    try {
      await t.sleep(pollDelay(unchanged, t.pollPolicy, t.random), signal);
    } catch (error) {
      throw (
        (opts.signal?.aborted ? new ServiceError('canceled', 'The request was cancelled', { cause: error }) : null) ??
        new ServiceError('timeout', 'The generation did not finish before its deadline', { cause: error })
      );
    }
  }
}

async function follow(
  t: Transport,
  operation: GenerationOperation,
  input: unknown,
  opts: FollowedGenerationOptions,
): Promise<GenerationResponse> {
  const start = await submit(t, operation, input, opts);
  if (!start.async) return start.response;
  opts.onAccepted?.(start.generation);
  opts.onUpdate?.(start.generation);
  const final = await waitFor(t, start.generation.id, opts);
  return generationResult(final);
}

export function generationCalls(t: Transport): GenerationCalls {
  return {
    generateVideo: (input, opts) => follow(t, 'videos.generations', input, opts),
    generateImage: (input, opts) => follow(t, 'images.generations', input, opts),
    createVariations: (input, opts) => follow(t, 'videos.variations', input, opts),
    submitGeneration: (operation, input, opts) => submit(t, operation, input, opts),
    getGeneration: (id, opts) => getGeneration(t, id, opts),
    async cancelGeneration(id, opts) {
      // Canceling twice is harmless (a final generation stays as it is), so errors are retried.
      const res = await call(t, {
        method: 'DELETE',
        path: `/generations/${encodeURIComponent(id)}`,
        schema: GenerationRecordResponse,
        retryServerErrors: true,
        options: opts,
        defaultTimeoutMs: t.defaultTimeoutMs,
      });
      return res.result;
    },
    async listGenerations(query, opts) {
      const res = await read(t, '/generations', GenerationListResponse, opts, {
        ...pageQuery(query),
        status: query?.status,
      });
      return { total: res.result.total, generations: res.result.generations };
    },
    waitForGeneration: (id, opts) => waitFor(t, id, opts),
  };
}
