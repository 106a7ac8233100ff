import type { PathSetting, Settings } from '../../../shared/ipc/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import {
  checkDownloadFolder,
  checkFfmpegPath,
  type PathCheck,
  type PathRulesContext,
} from '../../core/settings/path-rules.ts';
import { ipcError } from '../errors.ts';
import type { EventBus } from '../events.ts';
import type { PlatformPort } from '../platform.ts';
import type { DomainHandlers } from '../types.ts';

export interface SettingsDeps {
  profiles: Profiles;
  bus: EventBus;
  platform: PlatformPort;
  /** Home and the app's install and data roots, for the path rules (core/settings/path-rules.ts). */
  rules: PathRulesContext;
  /** What `setPath {downloadDir: null}` restores. */
  defaultDownloadDir: () => string;
}

const LABEL: Readonly<Record<PathSetting, string>> = {
  downloadDir: 'the download folder',
  ffmpegPath: 'the ffmpeg path',
};

/**
 * Settings live beside the profiles (core/profiles), in the one settings file. The two path
 * settings decide what the app serves to the page and what it runs, so the page never sets them
 * directly: in the app, main opens a native dialog and keeps what the user picked; in browser
 * mode, a typed path must pass the path rules (and the page asks the user to confirm it first).
 */
export function settingsHandlers(deps: SettingsDeps): DomainHandlers<'settings'> {
  const { profiles, bus, platform } = deps;
  const store = (patch: Partial<Settings>): Settings => {
    const next = profiles.updateSettings(patch);
    bus.publish({ type: 'settings.changed' });
    return next;
  };

  const check = async (field: PathSetting, input: string, picked: boolean): Promise<string> => {
    const result: PathCheck =
      field === 'downloadDir'
        ? await checkDownloadFolder(input, deps.rules)
        : await checkFfmpegPath(input, {
            ...deps.rules,
            downloadDir: profiles.settings().downloadDir,
            requireName: !picked,
          });
    if (!result.ok) throw ipcError('forbidden', `This cannot be ${LABEL[field]}: ${result.reason}.`);
    return result.path;
  };

  const refuseTyped = (): Error =>
    ipcError('forbidden', 'In the desktop app, paths are chosen with the Choose… button, not typed.');

  return {
    get: () => profiles.settings(),
    update: (patch) => store(patch),
    choosePath: async ({ field }) => {
      if (!platform.capabilities.pickDirectory) {
        throw ipcError('not_available', 'This needs the desktop app; type the path instead.', {
          capability: 'platform.pickDirectory',
        });
      }
      const current = profiles.settings();
      const picked =
        field === 'downloadDir'
          ? await platform.pickDirectory({ title: 'Download folder', defaultPath: current.downloadDir })
          : await platform.pickFile({
              title: 'ffmpeg binary',
              ...(current.ffmpegPath ? { defaultPath: current.ffmpegPath } : {}),
            });
      if (picked === null) return { chosen: false, settings: current };
      return { chosen: true, settings: store({ [field]: await check(field, picked, true) }) };
    },
    checkPath: async ({ field, path }) => {
      if (platform.mode === 'electron') throw refuseTyped();
      return { path: await check(field, path, false) };
    },
    setPath: async ({ field, path }) => {
      if (path === null) return store({ [field]: field === 'downloadDir' ? deps.defaultDownloadDir() : null });
      if (platform.mode === 'electron') throw refuseTyped();
      return store({ [field]: await check(field, path, false) });
    },
  };
}
