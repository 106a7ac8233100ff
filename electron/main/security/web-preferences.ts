import type { WebPreferences } from 'electron';

/** The properties a test (and a reviewer) checks on every window. */
export const REQUIRED_WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  experimentalFeatures: false,
  disableBlinkFeatures: 'Auxclick',
} as const satisfies WebPreferences;
