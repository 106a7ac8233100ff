// An app process for engine-process.test.ts: starts the Local engine in `argv[2]`, prints the
// engine's pid and waits to be killed (with no chance to close the engine).
import { startLocalEngine } from '../../../../../electron/core/engine/index.ts';
import { createLogger } from '../../../../../shared/node/logger.ts';
import { memoryKeychain } from '../../../../support/memory-keychain.ts';

const engine = await startLocalEngine({
  dataDir: process.argv[2]!,
  secrets: memoryKeychain(),
  logger: createLogger({ write: () => undefined }),
});
process.stdout.write(`${engine.pid()}\n`);
setInterval(() => undefined, 60_000);
