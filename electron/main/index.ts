// Electron main entry, bundled to dist/electron/main.cjs (CommonJS: __dirname is dist/electron).
import path from 'node:path';
import { runElectronMain } from './platform/electron-main.ts';

runElectronMain(path.resolve(__dirname, '..'));
