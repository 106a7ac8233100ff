import { describe, expect, it } from 'vitest';
import { IPC_ERROR_CODES, IPC_ERROR_STATUS, ipcErrorMap } from '../../../../shared/ipc/errors.ts';
import { IPC_ROUTES, ipcContract, isIpcRoute } from '../../../../shared/ipc/contract.ts';
import {
  AppEvent,
  JobRequest,
  KeyStatus,
  ProfileSetKey,
  ProvidersList,
  SettingsPatch,
  StartFrame,
  UploadFromBytes,
} from '../../../../shared/ipc/index.ts';
import { ERROR_CODES, ERROR_STATUS } from '../../../../shared/api/errors.ts';

describe('the IPC contract', () => {
  it('names every route domain.action and lists exactly the contract', () => {
    const fromContract = Object.entries(ipcContract).flatMap(([d, a]) => Object.keys(a).map((x) => `${d}.${x}`));
    expect([...IPC_ROUTES].sort()).toEqual(fromContract.sort());
    expect(isIpcRoute('__proto__')).toBe(false);
    expect(isIpcRoute('hasOwnProperty')).toBe(false);
  });

  it('covers what the renderer needs', () => {
    for (const r of [
      'profiles.setKey',
      'profiles.keyStatus',
      'models.list',
      'providers.list',
      'providers.setKey',
      'providers.removeKey',
      'providers.testKey',
      'providers.setEnabled',
      'providers.setBaseUrl',
      'usage.get',
      'usage.rateLimit',
      'jobs.submit',
      'jobs.submitBatch',
      'jobs.cancel',
      'jobs.retry',
      'jobs.duplicate',
      'jobs.reorder',
      'jobs.pause',
      'jobs.resume',
      'uploads.fromPath',
      'uploads.fromBytes',
      'library.query',
      'library.sync',
      'library.setFavourite',
      'library.retain',
      'library.download',
      'library.reveal',
      'library.export',
      'library.useLastFrame',
      'library.feed',
      'collections.addItems',
      'media.preview',
      'media.trim',
      'events.subscribe',
      'app.openExternal',
      'settings.update',
    ])
      expect(isIpcRoute(r), r).toBe(true);
  });

  it('has a status for every error code and passes the service codes through', () => {
    for (const c of IPC_ERROR_CODES) expect(IPC_ERROR_STATUS[c]).toBeGreaterThanOrEqual(400);
    for (const c of ERROR_CODES) expect(IPC_ERROR_CODES).toContain(c);
    // One table for the service's codes: the IPC statuses are the service's own.
    for (const c of ERROR_CODES) expect(IPC_ERROR_STATUS[c]).toBe(ERROR_STATUS[c]);
    expect(IPC_ERROR_STATUS.keychain_unavailable).toBe(503);
    expect(Object.keys(ipcErrorMap).sort()).toEqual([...IPC_ERROR_CODES].sort());
  });

  it('never lets a provider key out: a listed provider keeps only last4', () => {
    const provider = {
      id: 'fal',
      slug: 'fal',
      name: 'fal',
      description: '',
      status: 'ok',
      models: [],
      features: [],
      kind: 'remote',
      configured: true,
      last4: '0001',
      enabled: true,
      baseUrl: null,
      health: { status: 'ok', lastError: null, message: null, since: null },
      key: 'fal-live-secret-0001',
      apiKey: 'fal-live-secret-0001',
    };
    const parsed = ProvidersList.parse({ keysHeldBy: 'app', providers: [provider] });
    expect(JSON.stringify(parsed)).not.toContain('fal-live-secret');
    expect(ProvidersList.safeParse({ keysHeldBy: 'app', providers: [{ ...provider, last4: '00001' }] }).success).toBe(
      false,
    );
  });

  it('never lets a key out: KeyStatus strips unknown fields, and only setKey takes one', () => {
    const parsed = KeyStatus.parse({ hasKey: true, last4: 'abcd', backend: 'keychain', key: 'sk-live-secret' });
    expect(parsed).not.toHaveProperty('key');
    expect(KeyStatus.safeParse({ hasKey: true, last4: 'toolong', backend: 'keychain' }).success).toBe(false);
    expect(ProfileSetKey.safeParse({ id: 'p', key: '  ' }).success).toBe(false);
  });

  it('checks prompts against the limit of their kind', () => {
    expect(JobRequest.safeParse({ kind: 'video', prompt: 'x'.repeat(500), model: 'a/b' }).success).toBe(true);
    expect(JobRequest.safeParse({ kind: 'video', prompt: 'x'.repeat(501), model: 'a/b' }).success).toBe(false);
    expect(JobRequest.safeParse({ kind: 'image', prompt: 'x'.repeat(1000), model: 'a/b' }).success).toBe(true);
    expect(
      JobRequest.safeParse({ kind: 'image', prompt: 'p', model: 'a/b', startFrame: { kind: 'url', url: 'x' } }).success,
    ).toBe(false);
    expect(StartFrame.safeParse({ kind: 'shell', cmd: 'rm' }).success).toBe(false);
  });

  it('refuses oversize uploads and unknown settings before they reach main', () => {
    const big = new File([new Uint8Array(100_000_001)], 'big.mp4');
    expect(UploadFromBytes.safeParse({ file: big }).success).toBe(false);
    expect(SettingsPatch.safeParse({ theme: 'dark', apiKey: 'x' }).success).toBe(false);
    expect(SettingsPatch.safeParse({ namingPattern: '{model}.{ext}' }).success).toBe(false);
  });

  it('types events', () => {
    expect(AppEvent.safeParse({ type: 'library.changed', change: { reason: 'sync', ids: [] } }).success).toBe(true);
    expect(AppEvent.safeParse({ type: 'nope' }).success).toBe(false);
  });
});
