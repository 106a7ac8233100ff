import { checkExternalUrl } from '../external-url.ts';
import { ipcError } from '../errors.ts';
import type { PlatformPort } from '../platform.ts';
import type { DomainHandlers } from '../types.ts';

export interface AppInfoDeps {
  platform: PlatformPort;
  version: string;
  dataDir: string;
}

export function appHandlers(deps: AppInfoDeps): DomainHandlers<'app'> {
  return {
    info: () => ({
      name: 'Clipdesk',
      version: deps.version,
      mode: deps.platform.mode,
      platform: process.platform,
      dataDir: deps.dataDir,
      capabilities: deps.platform.capabilities,
    }),
    openExternal: async ({ url }) => {
      const check = checkExternalUrl(url);
      if (!check.ok) throw ipcError('forbidden', `This link cannot be opened: ${check.reason}.`);
      await deps.platform.openExternal(check.url);
      return { ok: true as const };
    },
  };
}
