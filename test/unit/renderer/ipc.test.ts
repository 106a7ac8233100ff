import { describe, expect, it } from 'vitest';
import { ORPCError } from '@orpc/client';
import type { IpcClient } from '../../../shared/ipc/index.ts';
import { IpcError, toIpcError, wrapErrors } from '../../../renderer/src/lib/ipc.ts';

describe('ipc errors', () => {
  it('keeps the code, message and retryAfter of a typed error', () => {
    const e = toIpcError(new ORPCError('rate_limit_exceeded', { message: 'Rate limit exceeded: retry in 12 seconds', data: { retryAfter: 12, status: 429 } }));
    expect(e).toBeInstanceOf(IpcError);
    expect(e).toMatchObject({ code: 'rate_limit_exceeded', message: 'Rate limit exceeded: retry in 12 seconds', retryAfter: 12, status: 429 });
  });
  it('turns a failed fetch into a connection message', () => {
    expect(toIpcError(new TypeError('Failed to fetch')).code).toBe('network_error');
  });
  it('every call of the wrapped client rejects with IpcError', async () => {
    const raw = { jobs: { submit: () => Promise.reject(new ORPCError('authentication_error', { message: 'Invalid API key' })) } };
    const client = wrapErrors(raw as unknown as IpcClient);
    await expect(client.jobs.submit({ kind: 'video', prompt: 'p', model: 'a/b' })).rejects.toMatchObject({ name: 'IpcError', code: 'authentication_error', message: 'Invalid API key' });
  });
});
