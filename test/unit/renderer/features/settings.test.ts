import { beforeEach, describe, expect, it } from 'vitest';
import { useSettings } from '../../../../renderer/src/stores/settings/index.ts';
import {
  activeProfile,
  maskedKey,
  resolveTheme,
  usageFraction,
} from '../../../../renderer/src/stores/settings/selectors.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { installFakeIpc, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const settings = {
  theme: 'dark' as const,
  downloadDir: '/d',
  namingPattern: '{id}.{ext}',
  retentionPolicy: 'off' as const,
  retentionWarnDays: 2,
  ffmpegPath: null,
  notifications: true,
};
const remote = {
  id: 'r1',
  name: 'Remote',
  kind: 'remote' as const,
  baseUrl: 'https://x/v1',
  key: { hasKey: false, last4: null, backend: 'keychain' as const },
};

beforeEach(() => {
  ipc = installFakeIpc();
  useSettings.getState().reset();
  localStorage.clear();
});

describe('settings selectors', () => {
  it('resolves system theme and masks keys', () => {
    expect(resolveTheme('system', true)).toBe('dark');
    expect(resolveTheme('system', false)).toBe('light');
    expect(resolveTheme('light', true)).toBe('light');
    expect(maskedKey('abcd')).toBe('••••••••abcd');
    expect(usageFraction(5, 10)).toBe(0.5);
    expect(usageFraction(5, 0)).toBe(0);
    expect(activeProfile({ profiles: { activeId: 'r1', profiles: [remote] } })?.id).toBe('r1');
  });
});

describe('settings store', () => {
  it('loads app info, settings and profiles; remembers the theme for the next start', async () => {
    ipc.app.info.mockResolvedValue({
      name: 'Clipdesk',
      version: '0.1.0',
      mode: 'browser',
      platform: 'linux',
      dataDir: '/x',
      capabilities: { pathUploads: false, revealInFolder: false, pickDirectory: false, osNotifications: false },
    });
    ipc.settings.get.mockResolvedValue(settings);
    ipc.profiles.list.mockResolvedValue({ activeId: 'r1', profiles: [remote] });
    await useSettings.getState().load();
    expect(useSettings.getState()).toMatchObject({ status: 'ready', connected: true, settings });
    expect(localStorage.getItem('clipdesk.theme')).toBe('"dark"');
  });
  it('is "not connected" when main cannot be reached', async () => {
    ipc.app.info.mockRejectedValue(new IpcError({ code: 'network_error', message: 'Lost the connection' }));
    ipc.settings.get.mockResolvedValue(settings);
    ipc.profiles.list.mockResolvedValue({ activeId: null, profiles: [] });
    await useSettings.getState().load();
    expect(useSettings.getState().connected).toBe(false);
  });
  it('a refused setting rolls back and shows main’s message by the field', async () => {
    useSettings.setState({ settings });
    ipc.settings.update.mockRejectedValue(
      new IpcError({ code: 'invalid_input', message: 'the naming pattern must contain {id} so names stay unique' }),
    );
    expect(await useSettings.getState().update({ namingPattern: '{model}' })).toBe(false);
    expect(useSettings.getState().settings?.namingPattern).toBe('{id}.{ext}');
    expect(useSettings.getState().fieldErrors['namingPattern']).toMatch(/must contain \{id\}/);
  });
  it('sets a key without keeping it: only the status comes back', async () => {
    useSettings.setState({ profiles: { activeId: 'r1', profiles: [remote] } });
    ipc.profiles.setKey.mockResolvedValue({ hasKey: true, last4: 'wxyz', backend: 'keychain' });
    ipc.usage.get.mockResolvedValue({});
    expect(await useSettings.getState().setKey('r1', 'sk-secret-wxyz')).toBe(true);
    expect(ipc.profiles.setKey).toHaveBeenCalledWith({ id: 'r1', key: 'sk-secret-wxyz' });
    const state = JSON.stringify(useSettings.getState());
    expect(state).not.toContain('sk-secret');
    expect(useSettings.getState().profiles.profiles[0]?.key).toEqual({
      hasKey: true,
      last4: 'wxyz',
      backend: 'keychain',
    });
  });
  it('usage errors keep the service message (e.g. a revoked key)', async () => {
    ipc.usage.get.mockRejectedValue(new IpcError({ code: 'authentication_error', message: 'Invalid API key' }));
    await useSettings.getState().loadUsage();
    expect(useSettings.getState().usageError).toBe('Invalid API key');
  });
});
