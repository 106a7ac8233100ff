// Browser mode (the real core behind the loopback host) in a process of its own, so that a test
// can tell whether what it does kills the process. Prints `{port, secret, downloads}` as one JSON
// line, then runs until stdin ends.
import { fileURLToPath } from 'node:url';
import { startBrowserMode } from '../../../../electron/host/browser-mode.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: host-child.ts DATA_DIR');
const root = fileURLToPath(new URL('../../../..', import.meta.url));
const mode = await startBrowserMode({ root, dataDir, version: '0.0.0-test', background: false });
const downloads = mode.app.profiles.settings().downloadDir;
process.stdout.write(`${JSON.stringify({ port: mode.host.port, secret: mode.host.secret, downloads })}\n`);
process.stdin.resume();
process.stdin.once('end', () => void mode.close().then(() => process.exit(0)));
