import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../electron/app/composition-root.ts';
import { browserPlatform } from '../../electron/app/platform.ts';
import type { IpcRouter } from '../../electron/app/router.ts';
import type { SecretStore } from '../../electron/core/secrets/index.ts';

/**
 * The app's composition root as a test drives it: browser platform, no background work (unless asked), and its
 * IPC router called in-process. Starting it again on the same `dataDir` is the app's restart.
 */
export function startTestApp(o: {
  dataDir: string;
  secrets: SecretStore;
  downloadDir?: string;
  background?: boolean;
}): {
  app: App;
  ipc: RouterClient<IpcRouter>;
} {
  const app = createApp({
    dataDir: o.dataDir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: o.secrets,
    background: o.background ?? false,
    ...(o.downloadDir ? { downloadDirOverride: o.downloadDir } : {}),
  });
  return { app, ipc: createRouterClient(app.router, { context: { transport: 'http' } }) };
}
