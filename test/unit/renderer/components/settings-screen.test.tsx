import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { AppInfo, Profile, Settings } from '../../../../shared/ipc/index.ts';
import { PreferencesPanel } from '../../../../renderer/src/features/settings/components/PreferencesPanel.tsx';
import { ProfilesPanel } from '../../../../renderer/src/features/settings/components/ProfilesPanel.tsx';
import { useSettings } from '../../../../renderer/src/stores/settings/index.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { installFakeIpc, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const settings: Settings = {
  theme: 'dark',
  downloadDir: '/home/ada/Videos/Clipdesk',
  namingPattern: '{id}.{ext}',
  retentionPolicy: 'off',
  retentionWarnDays: 2,
  ffmpegPath: null,
  notifications: true,
};
const RAW_DBUS =
  'No OS keychain is available (Platform failure: DBus error: org.freedesktop.DBus.Error.ServiceUnknown)';
const noKeychain = { hasKey: false, last4: null, backend: 'none' as const, message: RAW_DBUS };
const local: Profile = { id: 'local', name: 'Local engine', kind: 'local', baseUrl: '', key: noKeychain };
const remote: Profile = { id: 'r1', name: 'Remote', kind: 'remote', baseUrl: 'https://x/v1', key: noKeychain };

function appInfo(mode: 'browser' | 'electron'): AppInfo {
  return {
    name: 'Clipdesk',
    version: '0',
    mode,
    platform: 'linux',
    dataDir: '/x',
    capabilities: {
      pathUploads: mode === 'electron',
      revealInFolder: mode === 'electron',
      pickDirectory: mode === 'electron',
      osNotifications: false,
    },
  };
}

beforeEach(() => {
  ipc = installFakeIpc();
  useSettings.getState().reset();
});
afterEach(cleanup);

describe('profiles panel', () => {
  it('the Local engine shows no API-key box and no keychain error: it needs no key', () => {
    useSettings.setState({ profiles: { activeId: 'local', profiles: [local] } });
    render(<ProfilesPanel />);
    const group = screen.getByRole('group', { name: 'Profile Local engine' });
    expect(within(group).queryByLabelText(/API key/)).toBeNull();
    expect(group.querySelector('input[type="password"]')).toBeNull();
    expect(group.textContent).not.toMatch(/DBus|keychain/i);
    expect(group.textContent).toMatch(/No API key needed/);
  });

  it('a remote profile without a keychain says why instead of offering a key box that cannot save', () => {
    useSettings.setState({
      profiles: {
        activeId: 'local',
        profiles: [local, { ...remote, key: { ...noKeychain, message: 'No OS keychain is available.' } }],
      },
    });
    render(<ProfilesPanel />);
    const group = screen.getByRole('group', { name: 'Profile Remote' });
    expect(group.querySelector('input[type="password"]')).toBeNull();
    expect(within(group).getByText('No OS keychain is available.')).toBeTruthy();
  });

  it('a remote profile with a keychain takes a key', () => {
    useSettings.setState({
      profiles: { activeId: 'r1', profiles: [{ ...remote, key: { hasKey: false, last4: null, backend: 'keychain' } }] },
    });
    render(<ProfilesPanel />);
    expect(screen.getByPlaceholderText('Paste your API key')).toBeTruthy();
  });
});

describe('path settings', () => {
  it('browser mode: a typed folder is checked by main and stored only after the user confirms the real path', async () => {
    useSettings.setState({ app: appInfo('browser'), settings });
    ipc.settings.checkPath.mockResolvedValue({ path: '/mnt/archive/clips' });
    ipc.settings.setPath.mockResolvedValue({ ...settings, downloadDir: '/mnt/archive/clips' });
    render(<PreferencesPanel settings={settings} />);
    expect(screen.queryByRole('button', { name: 'Choose…' })).toBeNull();
    fireEvent.change(screen.getByLabelText('New download folder'), { target: { value: '/mnt/archive/link' } });
    fireEvent.click(screen.getAllByRole('button', { name: 'Change…' })[0]!);
    const confirm = await screen.findByRole('alertdialog', { name: 'Confirm download folder' });
    expect(ipc.settings.checkPath).toHaveBeenCalledWith({ field: 'downloadDir', path: '/mnt/archive/link' });
    expect(ipc.settings.setPath).not.toHaveBeenCalled();
    expect(confirm.textContent).toMatch(/\/mnt\/archive\/clips/);
    fireEvent.click(within(confirm).getByRole('button', { name: 'Use this path' }));
    await waitFor(() =>
      expect(ipc.settings.setPath).toHaveBeenCalledWith({ field: 'downloadDir', path: '/mnt/archive/clips' }),
    );
    await waitFor(() => expect(useSettings.getState().settings?.downloadDir).toBe('/mnt/archive/clips'));
    expect(ipc.settings.update).not.toHaveBeenCalled();
  });

  it('browser mode: a refused folder shows main’s reason and asks nothing', async () => {
    useSettings.setState({ app: appInfo('browser'), settings });
    ipc.settings.checkPath.mockRejectedValue(
      new IpcError({
        code: 'forbidden',
        message: 'This cannot be the download folder: it is inside the system folder /etc.',
      }),
    );
    render(<PreferencesPanel settings={settings} />);
    fireEvent.change(screen.getByLabelText('New download folder'), { target: { value: '/etc' } });
    fireEvent.click(screen.getAllByRole('button', { name: 'Change…' })[0]!);
    expect((await screen.findByRole('alert')).textContent).toMatch(/inside the system folder \/etc/);
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(ipc.settings.setPath).not.toHaveBeenCalled();
  });

  it('desktop: no typed path at all; Choose… asks main to open the dialog', async () => {
    useSettings.setState({ app: appInfo('electron'), settings });
    ipc.settings.choosePath.mockResolvedValue({
      chosen: true,
      settings: { ...settings, downloadDir: '/home/ada/Clips' },
    });
    render(<PreferencesPanel settings={settings} />);
    expect(screen.queryByLabelText('New download folder')).toBeNull();
    expect(screen.queryByLabelText('New ffmpeg path')).toBeNull();
    fireEvent.click(screen.getAllByRole('button', { name: 'Choose…' })[0]!);
    await waitFor(() => expect(ipc.settings.choosePath).toHaveBeenCalledWith({ field: 'downloadDir' }));
    await waitFor(() => expect(useSettings.getState().settings?.downloadDir).toBe('/home/ada/Clips'));
  });
});
