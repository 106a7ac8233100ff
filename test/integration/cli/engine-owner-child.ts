// A process that runs the Local engine on `argv[2]` as the app does, on a machine without a
// keychain (one-engine.test.ts): prints the engine's URL, then waits to be killed.
import { openLocalEngine } from '../../../electron/core/engine/index.ts';
import { createLogger } from '../../../shared/node/logger.ts';
import { noKeychain } from '../../support/memory-keychain.ts';

const engine = await openLocalEngine({
  dataDir: process.argv[2]!,
  secrets: noKeychain(),
  logger: createLogger({ write: () => undefined }),
  program: 'a test app',
});
process.stdout.write(`${engine.url}\n`);
setInterval(() => undefined, 60_000);
