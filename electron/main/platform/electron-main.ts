// The Electron main process, wired: the only place that takes the real `electron` module (the
// boundary rule: only electron/main/platform touches Electron APIs). Everything it calls gets the APIs it needs as arguments.
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  Notification,
  protocol,
  safeStorage,
  session,
  shell,
  utilityProcess,
} from 'electron';
import { createSecretStore, keyStoreChoice, secretStoreOptions } from '../../core/secrets/index.ts';
import { safeStorageCipher } from './safe-storage.ts';
import { createElectronSettingsStore } from './settings-store.ts';
import { utilityEngineSpawner } from './utility-engine-spawner.ts';
import path from 'node:path';
import { createApp, type App as ClipdeskApp } from '../../app/composition-root.ts';
import { startAppEndpoint } from '../../host/app-endpoint-host.ts';
import type { Host } from '../../host/server.ts';
import { PRODUCT_NAME } from '../../app/paths.ts';
import { bindDroppedPaths, bindElectronIpc } from '../ipc/binding.ts';
import { electronPlatform } from './desktop.ts';
import { appMenuTemplate } from './menu.ts';
import { handleProtocols, registerSchemes } from './protocol.ts';
import { denyAllPermissions, enforceCsp } from './session.ts';
import { APP_CSP } from '../app-files.ts';
import { claimSingleInstance } from './single-instance.ts';
import type { WindowLike } from './types.ts';
import { createMainWindow, hardenWebContents } from './window.ts';
import { bindQuit } from './quit.ts';
import { killAll, packagedMediaBinaries, useBundledMediaBinaries } from '../../../shared/node/ffmpeg.ts';
import { createFileLogger, type Logger } from '../../../shared/node/logger.ts';
import { onceShutdown } from '../../../shared/node/shutdown.ts';
import { APP_ENTRY_URL, MEDIA_URL_PREFIX } from '../security/origin.ts';

let mainWindow: WindowLike | null = null;
let core: ClipdeskApp | null = null;
/** The loopback endpoint `clipdesk mcp` goes through (docs/agents.md); null until up, or if it failed. */
let endpoint: Promise<Host | null> = Promise.resolve(null);

const focusWindow = (): void => {
  if (!mainWindow || mainWindow.isDestroyed()) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.focus();
};

/** `distDir`: the packaged dist/ folder (renderer/ and electron/ inside). */
export function runElectronMain(distDir: string): void {
  app.setName(PRODUCT_NAME);
  if (!claimSingleInstance(app, focusWindow)) return;
  registerSchemes(protocol);
  const platform = electronPlatform({ shell, dialog, Notification, window: () => mainWindow });
  const openExternal = (url: string): void => void platform.openExternal(url).catch(() => undefined);

  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, openExternal));
  const log = createFileLogger({ dataDir: app.getPath('userData'), program: 'app' });
  const logger = log.logger;
  logger.info({ version: app.getVersion() }, 'Clipdesk starting');
  app.on('window-all-closed', () => app.quit());
  // Quit waits for the core (ffmpeg children killed and awaited, journals closed), then the log.
  const shutdown = onceShutdown(
    async () => {
      // The endpoint file goes first: no agent may reach a core that is stopping.
      await (await endpoint)?.close();
      await core?.dispose();
      // Anything still in the process-wide registry (one app per process here, so all of it is ours).
      await killAll();
      logger.info('Clipdesk stopped');
      await log.close();
    },
    { onError: (error) => logger.error({ err: error }, 'shutdown failed') },
  );
  bindQuit(app, shutdown, process);

  void app.whenReady().then(() => {
    denyAllPermissions(session.defaultSession);
    enforceCsp(session.defaultSession, APP_CSP);
    Menu.setApplicationMenu(Menu.buildFromTemplate(appMenuTemplate(process.platform, app.isPackaged)));
    const fallback = safeStorageCipher(safeStorage, app.getPath('userData'), process.platform);
    // Packaged: electron-builder's extraResources put ffmpeg/ffprobe in resources/bin. They are the
    // bundled build: a consistent pair on the PATH, the setting or CLIPDESK_FFMPEG still come first.
    if (app.isPackaged) useBundledMediaBinaries(packagedMediaBinaries(process.resourcesPath));
    core = createApp({
      dataDir: app.getPath('userData'),
      // `--key-store file` (or CLIPDESK_KEY_STORE=file): the user's key file over the keychain.
      secrets: createSecretStore(
        secretStoreOptions(
          keyStoreChoice({
            flag: app.commandLine.getSwitchValue('key-store') || undefined,
            env: process.env,
            userDataDir: app.getPath('userData'),
          }),
          fallback,
        ),
      ),
      settingsStore: createElectronSettingsStore(app.getPath('userData')),
      installRoot: app.getAppPath(),
      platform,
      version: app.getVersion(),
      mediaUrlPrefix: MEDIA_URL_PREFIX,
      logger,
      engineSpawner: utilityEngineSpawner(utilityProcess),
    });
    endpoint = serveAgents(app.getPath('userData'), core, logger);
    handleProtocols(protocol, path.join(distDir, 'renderer'), core.mediaRoots);
    bindElectronIpc(ipcMain, core.router, (m) => logger.warn(m));
    bindDroppedPaths(
      ipcMain,
      (file) => core?.grantDroppedPath(file) ?? false,
      (m) => logger.warn(m),
    );
    mainWindow = createMainWindow(BrowserWindow, {
      preloadPath: path.join(distDir, 'electron', 'preload.cjs'),
      url: APP_ENTRY_URL,
      openExternal,
    });
  });
}

/**
 * The IPC contract on loopback, announced in the data folder, so that `clipdesk mcp` goes through
 * this window's core rather than running a second one on the same files. The window works without
 * it: a failure is logged, and an agent then runs its own core.
 */
function serveAgents(dataDir: string, app: ClipdeskApp, logger: Logger): Promise<Host | null> {
  return startAppEndpoint(dataDir, { router: app.router }).then(
    (host) => {
      logger.info({ origin: host.origin }, 'serving the app to clipdesk mcp on loopback');
      return host;
    },
    (error: unknown) => {
      logger.warn(
        { err: error },
        'could not serve the app to clipdesk mcp on loopback: an agent on this data folder would run a second core',
      );
      return null;
    },
  );
}
