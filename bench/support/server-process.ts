/**
 * A benchmark's server in a process of its own, started by transfer.ts. It prints one line when
 * ready and exits when its stdin closes:
 * - `--engine DIR USER`: the Local engine with its data in DIR; prints "URL KEY" (an enterprise
 *   key for USER).
 * - `--plain discard|disk FILE`: the plainest PUT server; `discard` reads and drops the body,
 *   `disk` pipes it into a new file named FILE-N through an fs.WriteStream (1 MiB writes); prints
 *   its URL.
 *
 * The engine is imported only in engine mode, so a plain server's heap stays as small as a
 * plain server's would be (a larger heap makes every collection of received chunks dearer).
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { pipeline } from 'node:stream';
import type { AddressInfo } from 'node:net';

const [mode, a = '', b = ''] = process.argv.slice(2);

if (mode === '--engine') {
  const { startService } = await import('../../server/index.ts');
  const service = await startService({ dataDir: a, sweepIntervalMs: 0 });
  const { key } = await service.createKey({ user: b, tier: 'enterprise' });
  process.stdout.write(`${service.url} ${key}\n`);
  process.stdin.once('end', () => void service.close().then(() => process.exit(0)));
} else if (mode === '--plain' && (a === 'discard' || a === 'disk')) {
  let puts = 0;
  const server = createServer((req, res) => {
    if (a === 'disk') {
      // A new file each time, removed after the answer (as the bench removes the service's
      // uploads), so no PUT pays for truncating the one before.
      const file = `${b}-${++puts}`;
      pipeline(req, createWriteStream(file, { highWaterMark: 1 << 20 }), (error) => {
        res.statusCode = error ? 500 : 200;
        res.end('{}');
        void rm(file, { force: true });
      });
    } else {
      req.resume();
      req.on('end', () => res.end('{}'));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/${a}\n`);
  process.stdin.once('end', () => process.exit(0));
} else {
  console.error('usage: server-process.ts --engine DIR USER | --plain discard|disk FILE');
  process.exit(2);
}
process.stdin.resume();
