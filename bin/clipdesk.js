#!/usr/bin/env node
// The `clipdesk` command. The CLI is TypeScript run by Node 22's type stripping; on an older
// Node, re-run under the project's pinned Node (the `node` devDependency) when it is there.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  const pinned = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(`clipdesk: needs Node 22.18 or newer (this is ${process.version})\n`);
    process.exit(1);
  }
  const res = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(res.status ?? 1);
}
const { main } = await import('../electron/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
