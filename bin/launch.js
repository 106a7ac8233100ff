// What both bins share: the CLIs are TypeScript that Node runs by stripping types (Node 22.18+,
// 23.6+). On an older Node (any from 20), a bin runs itself again under the project's pinned Node
// (the `node` devDependency, node_modules/node/bin/node), so it works from the machine's Node,
// through npx, and installed globally (`npm i -g .` links the checkout). See docs/cli.md.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Whether this Node strips TypeScript types without a flag. */
export function stripsTypes(version = process.versions.node) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
}

/**
 * Runs `source` (a module URL relative to this folder) in this process when this Node can, else
 * runs `bin` again under the pinned Node and exits as it does.
 */
export async function launch(bin, source) {
  if (stripsTypes()) return import(new URL(source, import.meta.url).href);
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  const name = fileURLToPath(bin)
    .replace(/^.*[\\/]/, '')
    .replace(/\.js$/, '');
  if (process.env.CLIPDESK_RELAUNCHED || !existsSync(pinned)) {
    process.stderr.write(
      `${name}: needs Node 22.18 or newer (this is ${process.version}); run \`npm install\` in ${fileURLToPath(new URL('..', import.meta.url))} to get the pinned Node\n`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(bin), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, CLIPDESK_RELAUNCHED: '1' },
  });
  // A terminal's Ctrl-C already reaches the child (same process group): passing SIGINT on as well
  // would be a second signal, which stops `serve` at once instead of gracefully. SIGTERM and
  // SIGHUP, sent to this process alone by a supervisor, are passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
  return undefined;
}
