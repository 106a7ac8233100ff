// Sandboxed preload (bundled to dist/electron/preload.cjs). A generic forwarder: see bridge.ts.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { installBridge, type PreloadDeps } from './bridge.ts';

const win = globalThis as unknown as PreloadDeps['window'];
const FileClass = (globalThis as unknown as { File: abstract new (...args: never[]) => unknown }).File;

installBridge({
  window: win,
  ipcRenderer,
  contextBridge,
  getPathForFile: (file) => webUtils.getPathForFile(file),
  isFile: (value) => value instanceof FileClass,
  platform: process.platform,
});
