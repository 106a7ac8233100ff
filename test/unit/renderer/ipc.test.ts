import { afterEach, describe, expect, it, vi } from 'vitest';
import { ORPCError } from '@orpc/client';
import type { IpcClient } from '../../../shared/ipc/index.ts';
import { IpcError, onEvent, onReconnect, setIpcClient, toIpcError, wrapErrors } from '../../../renderer/src/lib/ipc.ts';

describe('ipc errors', () => {
  it('keeps the code, message and retryAfter of a typed error', () => {
    const e = toIpcError(
      new ORPCError('rate_limit_exceeded', {
        message: 'Rate limit exceeded: retry in 12 seconds',
        data: { retryAfter: 12, status: 429 },
      }),
    );
    expect(e).toBeInstanceOf(IpcError);
    expect(e).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'Rate limit exceeded: retry in 12 seconds',
      retryAfter: 12,
      status: 429,
    });
  });
  it('turns a failed fetch into a connection message', () => {
    expect(toIpcError(new TypeError('Failed to fetch')).code).toBe('network_error');
  });
  it('every call of the wrapped client rejects with IpcError', async () => {
    const raw = {
      jobs: { submit: () => Promise.reject(new ORPCError('authentication_error', { message: 'Invalid API key' })) },
    };
    const client = wrapErrors(raw as unknown as IpcClient);
    await expect(client.jobs.submit({ kind: 'video', prompt: 'p', model: 'a/b' })).rejects.toMatchObject({
      name: 'IpcError',
      code: 'authentication_error',
      message: 'Invalid API key',
    });
  });
});

describe('ipc client wrapper over a real oRPC client', () => {
  it('reaches nested routes through oRPC’s callable proxies', async () => {
    const { createORPCClient } = await import('@orpc/client');
    const calls: string[] = [];
    const link = {
      call: (path: readonly string[], input: unknown) => {
        calls.push(`${path.join('.')}:${JSON.stringify(input)}`);
        if (path.join('.') === 'jobs.cancel')
          return Promise.reject(new ORPCError('not_found', { message: 'No such job' }));
        return Promise.resolve({ models: [] });
      },
    };
    const client = wrapErrors(createORPCClient<IpcClient>(link));
    await expect(client.models.list(undefined)).resolves.toEqual({ models: [] });
    await expect(client.jobs.cancel({ id: 'x' })).rejects.toMatchObject({
      name: 'IpcError',
      code: 'not_found',
      message: 'No such job',
    });
    expect(calls).toEqual(['models.list:undefined', 'jobs.cancel:{"id":"x"}']);
  });
});

describe('the event stream', () => {
  afterEach(() => {
    setIpcClient(null);
    vi.useRealTimers();
  });

  it('tells who mirrors main that it came back after a break, not on the first connection', async () => {
    vi.useFakeTimers();
    let subscriptions = 0;
    const client = {
      events: {
        subscribe: () => {
          subscriptions++;
          const first = subscriptions === 1;
          return Promise.resolve(
            (async function* () {
              yield { type: 'settings.changed' };
              // The first stream breaks after one event, as a dropped connection does; the second stays open.
              if (first) throw new TypeError('network error');
              await new Promise(() => undefined);
            })(),
          );
        },
      },
    };
    setIpcClient(client as unknown as IpcClient);
    const heard: string[] = [];
    const offReconnect = onReconnect(() => heard.push('reconnected'));
    const offEvent = onEvent('settings.changed', () => heard.push('event'));
    await vi.waitFor(() => expect(heard).toEqual(['event']));
    await vi.advanceTimersByTimeAsync(500);
    await vi.waitFor(() => expect(heard).toEqual(['event', 'reconnected', 'event']));
    expect(subscriptions).toBe(2);
    offEvent();
    offReconnect();
  });
});
