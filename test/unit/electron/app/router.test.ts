import { describe, expect, it } from 'vitest';
import type { ORPCError } from '@orpc/server';
import { createRouterClient } from '@orpc/server';
import { ipcError } from '../../../../electron/app/errors.ts';
import { ServiceError } from '../../../../electron/core/api/index.ts';
import { createIpcRouter, routeFromPath } from '../../../../electron/app/router.ts';
import { IPC_ROUTES, isIpcRoute } from '../../../../shared/ipc/contract.ts';
import { stubHandlers } from '../../../support/ipc-handlers.ts';

const settings = {
  theme: 'system' as const,
  downloadDir: '/tmp/d',
  namingPattern: '{id}.{ext}',
  retentionPolicy: 'off' as const,
  retentionWarnDays: 3,
  ffmpegPath: null,
  notifications: true,
};

describe('route names', () => {
  it('every route is domain.action and own', () => {
    expect(IPC_ROUTES.length).toBeGreaterThan(40);
    for (const r of IPC_ROUTES) expect(r).toMatch(/^[a-z]+\.[a-zA-Z]+$/);
    expect(isIpcRoute('jobs.submit')).toBe(true);
  });

  it.each([
    '__proto__',
    '__proto__.toString',
    'constructor',
    'app.constructor',
    'app.__proto__',
    'toString',
    'jobs.hasOwnProperty',
    'nope.x',
    '',
  ])('rejects %j', (name) => expect(isIpcRoute(name)).toBe(false));

  it('maps paths to routes only when they are in the contract', () => {
    expect(routeFromPath('/rpc/jobs/submit', '/rpc')).toBe('jobs.submit');
    expect(routeFromPath('/rpc/__proto__/toString', '/rpc')).toBeNull();
    expect(routeFromPath('/rpc/app/%5F%5Fproto%5F%5F', '/rpc')).toBeNull();
    expect(routeFromPath('/rpc/jobs/submit/x', '/rpc')).toBeNull();
    expect(routeFromPath('/rpc/%E0%A4%A', '/rpc')).toBeNull();
  });
});

describe('createIpcRouter', () => {
  const handlers = stubHandlers({
    settings: { get: () => settings, update: (patch) => ({ ...settings, ...patch }) },
    jobs: {
      cancel: () => {
        throw new ServiceError('rate_limit_exceeded', 'Rate limit exceeded', { retryAfter: 7, status: 429 });
      },
      retry: () => {
        throw ipcError('conflict', 'only failed jobs can be retried');
      },
      // A handler that returns more than the contract allows.
      stats: () =>
        ({
          paused: false,
          queued: 0,
          running: { video: 0, image: 0 },
          limit: { video: 1, image: 1 },
          nextSlotInMs: 0,
          key: 'sk-secret',
        }) as never,
    },
  });
  const rpc = createRouterClient(createIpcRouter(handlers), { context: { transport: 'http' as const } });

  it('calls the handler with the parsed input', async () => {
    await expect(rpc.settings.update({ theme: 'dark' })).resolves.toMatchObject({ theme: 'dark' });
  });

  it('refuses a handler map that misses a route', () => {
    const { settings: _settings, ...partial } = handlers;
    expect(() => createIpcRouter(partial as typeof handlers)).toThrow(/settings\.get has no handler/);
  });

  it('passes core errors on with their code, keeping the message and retryAfter', async () => {
    const err = (await rpc.jobs.cancel({ id: 'j1' }).catch((e: unknown) => e)) as ORPCError<
      string,
      { retryAfter: number }
    >;
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.message).toBe('Rate limit exceeded');
    expect(err.data.retryAfter).toBe(7);
    expect(err.defined).toBe(true);
  });

  it('passes typed errors through', async () => {
    const err = (await rpc.jobs.retry({ id: 'j1' }).catch((e: unknown) => e)) as ORPCError<string, unknown>;
    expect(err.code).toBe('conflict');
  });

  it('strips fields the contract does not declare from outputs', async () => {
    const out = await rpc.jobs.stats();
    expect(out).not.toHaveProperty('key');
  });
});
