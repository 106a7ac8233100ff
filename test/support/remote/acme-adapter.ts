import { timingSafeEqual } from 'node:crypto';
import { request } from 'undici';
import { ProviderError } from '../../../server/providers/remote/contract.ts';
import type {
  AdapterSettings,
  JobStatus,
  ProviderAdapter,
  ProviderErrorClass,
  RemoteProviderId,
} from '../../../server/providers/remote/contract.ts';
import type { RemoteProvider } from '../../../server/providers/types.ts';
import type { StartServiceOptions } from '../../../server/index.ts';
import { acmeSignature } from './fake-provider.ts';

/**
 * A small adapter for the "Acme" fake (fake-provider.ts), written to the same contract as the six
 * real ones, so the runtime (runner, generation loop, resume, webhooks) is tested on its own.
 * `id` borrows one of the real provider ids (the contract types them), under its own slug.
 */
export function acmeAdapter(id: RemoteProviderId = 'luma', name = 'Acme'): ProviderAdapter {
  const call = async (
    settings: AdapterSettings,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ) => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${settings.baseUrl ?? 'https://acme.invalid'}${path}`, {
        method,
        headers: { authorization: `Bearer ${settings.apiKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw new ProviderError(id, 'server', `${name} is not reachable`, { cause: error });
    }
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) {
      try {
        return { json: JSON.parse(text) as Record<string, unknown>, headers: res.headers };
      } catch {
        throw new ProviderError(id, 'malformed', `${name} answered with malformed JSON`);
      }
    }
    const retry = Number(res.headers['retry-after']);
    const errorClass: ProviderErrorClass =
      res.statusCode === 401 || res.statusCode === 403
        ? 'auth'
        : res.statusCode === 429
          ? 'rate_limited'
          : res.statusCode === 422 && text.includes('content_policy')
            ? 'content_policy'
            : res.statusCode >= 500
              ? 'server'
              : 'invalid_input';
    const message =
      errorClass === 'auth'
        ? `${name} refused its key`
        : errorClass === 'content_policy'
          ? `${name} refused the request: ${(JSON.parse(text) as { message: string }).message}`
          : `${name} answered HTTP ${res.statusCode}`;
    throw new ProviderError(id, errorClass, message, {
      status: res.statusCode,
      ...(Number.isFinite(retry) ? { retryAfterSeconds: retry } : {}),
    });
  };

  const toStatus = (body: Record<string, unknown>, retryAfter?: string | string[]): JobStatus => {
    const retryAfterSeconds = typeof retryAfter === 'string' ? Number(retryAfter) : undefined;
    const hint = retryAfterSeconds !== undefined ? { retryAfterSeconds } : {};
    switch (body['status']) {
      case 'queued':
        return { status: 'queued', ...hint };
      case 'running':
        return { status: 'running', ...hint };
      case 'succeeded': {
        const outputs = body['outputs'];
        if (!Array.isArray(outputs)) throw new ProviderError(id, 'malformed', `${name} answered without outputs`);
        const cost = body['cost'];
        return {
          status: 'succeeded',
          outputs: outputs.map((url) => ({ url: String(url) })),
          ...(typeof cost === 'number' ? { cost } : {}),
        };
      }
      case 'failed': {
        const error = body['error'] as { type?: string; message?: string } | undefined;
        const errorClass = error?.type === 'content_policy' ? 'content_policy' : 'failed';
        return {
          status: 'failed',
          error: new ProviderError(id, errorClass, `${name}: ${error?.message ?? 'the job failed'}`),
        };
      }
      case 'canceled':
        return { status: 'canceled' };
      default:
        throw new ProviderError(id, 'malformed', `${name} answered an unknown status`);
    }
  };

  return {
    id,
    name,
    description: 'A made-up provider for tests',
    envKey: 'ACME_KEY',
    defaultBaseUrl: 'https://acme.invalid',
    webhooks: true,
    startImage: 'none',
    async testKey(settings, signal) {
      await call(settings, 'GET', '/v1/me', undefined, signal);
    },
    async submit(settings, task) {
      const { json } = await call(
        settings,
        'POST',
        '/v1/jobs',
        {
          model: task.path,
          prompt: task.prompt,
          duration: task.durationSeconds,
          width: task.width,
          height: task.height,
          count: task.count,
          ...(settings.webhookUrl !== undefined ? { webhook_url: settings.webhookUrl } : {}),
        },
        task.signal,
      );
      if (typeof json['id'] !== 'string') throw new ProviderError(id, 'malformed', `${name} answered without a job id`);
      return { id: json['id'], state: { path: task.path } };
    },
    async poll(settings, job, signal) {
      const { json, headers } = await call(
        settings,
        'GET',
        `/v1/jobs/${encodeURIComponent(job.id)}`,
        undefined,
        signal,
      );
      return toStatus(json, headers['retry-after']);
    },
    async cancel(settings, job, signal) {
      await call(settings, 'POST', `/v1/jobs/${encodeURIComponent(job.id)}/cancel`, {}, signal);
    },
    webhook(settings, delivery) {
      return Promise.resolve(acmeDelivery(settings.apiKey, delivery, toStatus));
    },
  };
}

/** An Acme delivery → its job and status, when its signature is the key's. */
function acmeDelivery(
  apiKey: string,
  delivery: { headers: Record<string, string>; body: Buffer },
  toStatus: (body: Record<string, unknown>) => JobStatus,
): { jobId: string; status: JobStatus } | undefined {
  const signature = Buffer.from(delivery.headers['x-acme-signature'] ?? '');
  const expected = Buffer.from(acmeSignature(apiKey, delivery.body));
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(delivery.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof body['id'] !== 'string') return undefined;
  return { jobId: body['id'], status: toStatus(body) };
}

/** A remote provider around the Acme adapter, offering `models` at `price` (USD per second or image). */
export function acmeProvider(opts: {
  id?: RemoteProviderId;
  slug?: string;
  name?: string;
  models: Array<{
    model: string;
    price: number;
    features: RemoteProvider['offers'][number]['features'];
    sizes: string[];
  }>;
}): RemoteProvider {
  const name = opts.name ?? 'Acme';
  const adapter = acmeAdapter(opts.id ?? 'luma', name);
  return {
    kind: 'remote',
    id: adapter.id,
    slug: opts.slug ?? 'acme',
    name,
    description: adapter.description,
    offers: opts.models.map((m) => ({ ...m, path: `acme/${m.model}` })),
    adapter,
  };
}

/**
 * The service's settings for the Acme fake as its one remote provider, in Luma's slot: a motion
 * model at 360p, reached with `key` at `baseUrl` (the tests that run it across nodes or processes).
 */
export function acmeMotionSettings(
  key: string,
  baseUrl: string,
): Pick<StartServiceOptions, 'remoteProviders' | 'providerEnv' | 'providerKeys' | 'providerBaseUrls'> {
  return {
    remoteProviders: [
      acmeProvider({
        id: 'luma',
        slug: 'acme',
        models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
      }),
    ],
    providerEnv: {},
    providerKeys: { luma: key },
    providerBaseUrls: { luma: baseUrl },
  };
}

/** The runners' safety poll in WEBHOOK_ONLY_TIMINGS: ten minutes, far past any test. */
const SAFETY_POLL_MS = 600_000;

/**
 * Runner timings for tests where only a webhook (or its relay between nodes) can finish a job in
 * time: fast polls while submitting, the safety poll ten minutes away.
 */
export const WEBHOOK_ONLY_TIMINGS = {
  pollInitialMs: 5,
  pollMaxMs: 20,
  jitter: 0.2,
  stallMs: 2_000,
  requestTimeoutMs: 5_000,
  webhookPollMs: SAFETY_POLL_MS,
  timeoutMs: 2 * SAFETY_POLL_MS,
};
