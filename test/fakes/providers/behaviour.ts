import type { ServerResponse } from 'node:http';
import { inputProblems, shippedInputSchema } from '../../../server/providers/remote/input-schemas.ts';
import type { InputProblem } from '../../../server/providers/remote/input-schemas.ts';
import type { RemoteProviderId } from '../../../server/providers/remote/contract.ts';
import { sendJson } from './loopback.ts';
import type { FakeBehaviour, FakeOptions } from './types.ts';

/** A fake's behaviours from its options (types.ts, FakeBehaviour). */
export function behaviourOf(options: FakeOptions): FakeBehaviour {
  return {
    pollRateLimits: options.pollRateLimits ?? 0,
    pollRetryAfter: options.pollRetryAfter === undefined ? (options.retryAfterSeconds ?? 1) : options.pollRetryAfter,
    expiredOutputs: options.expiredOutputs ?? false,
  };
}

/**
 * Whether this poll is one of the rate-limited ones; if so the 429 is sent (`body` in the
 * provider's words) and one fewer remains.
 */
export function rateLimitedPoll(behaviour: FakeBehaviour, res: ServerResponse, body: unknown): boolean {
  if (behaviour.pollRateLimits <= 0) return false;
  behaviour.pollRateLimits -= 1;
  const headers: Record<string, string> =
    behaviour.pollRetryAfter === null ? {} : { 'retry-after': String(behaviour.pollRetryAfter) };
  sendJson(res, 429, body, headers);
  return true;
}

/**
 * What the model's shipped input schema refuses in `body` (undefined: the fake knows no schema for
 * the path, so it checks nothing beyond its own basic rules). The fakes check strictly: a real
 * service does not apply the adapters' documented mappings.
 */
export function schemaRefusal(provider: RemoteProviderId, path: string, body: unknown): InputProblem[] | undefined {
  const entry = shippedInputSchema(provider, path);
  if (!entry) return undefined;
  const problems = inputProblems(entry.schema, body);
  return problems.length > 0 ? problems : undefined;
}

/** "Input should be '16:9', '9:16' …": a problem as the provider's validator words it. */
export function problemText(problem: InputProblem): string {
  if (problem.allowed) return `Input should be ${problem.allowed.map((v) => `'${String(v)}'`).join(', ')}`;
  return problem.message === 'is required' ? 'Field required' : problem.message;
}
