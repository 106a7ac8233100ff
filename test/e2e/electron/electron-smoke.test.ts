// Playwright `_electron` smoke test of the desktop app. It needs an Electron binary (the `electron`
// package downloads one lazily; on machines where that download is blocked there is none) and the
// bundles from `npm run build`. Without a binary it is skipped, and says why.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, expect, test } from '@playwright/test';

const root = fileURLToPath(new URL('../../..', import.meta.url));

function electronBinary(): { path: string | null; reason: string } {
  try {
    const bin = createRequire(import.meta.url)('electron') as unknown;
    if (typeof bin === 'string' && existsSync(bin)) return { path: bin, reason: '' };
    return { path: null, reason: `the electron package points at ${String(bin)}, which does not exist` };
  } catch (error) {
    return {
      path: null,
      reason: `require('electron') failed: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`,
    };
  }
}

const binary = electronBinary();
const bundle = path.join(root, 'dist', 'electron', 'main.cjs');
const skipReason = binary.path
  ? existsSync(bundle)
    ? ''
    : `no ${bundle}; run npm run build first`
  : `no Electron runtime on this machine (${binary.reason})`;
if (skipReason) console.warn(`[electron smoke] skipped: ${skipReason}`);

test.describe('desktop app (Electron)', () => {
  test.skip(skipReason !== '', skipReason);

  test('opens one hardened window on the app origin and answers over the IPC port', async () => {
    const data = await mkdtemp(path.join(tmpdir(), 'clipdesk-electron-'));
    const app = await electron.launch({ executablePath: binary.path!, args: [root, `--user-data-dir=${data}`] });
    try {
      const page = await app.firstWindow();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toMatch(/^clipdesk-app:\/\/app\//);
      // No Node in the page; only the bridge.
      expect(await page.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined');
      expect(await page.evaluate(() => (globalThis as { clipdesk?: { transport: string } }).clipdesk?.transport)).toBe(
        'electron',
      );
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const wc = BrowserWindow.getAllWindows()[0]!.webContents as unknown as {
          getLastWebPreferences(): Record<string, unknown>;
        };
        return wc.getLastWebPreferences();
      });
      expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true });
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
    } finally {
      await app.close();
      await rm(data, { recursive: true, force: true });
    }
  });
});
