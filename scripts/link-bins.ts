// `npm install` links the bins of dependencies into node_modules/.bin but not the project's own,
// so `npx clipdesk` and `npx clipdesk-service` would not resolve inside the repo. This `prepare`
// step links each entry of package.json's "bin" there, as npm would for a dependency.
import { chmod, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const binDir = join(root, 'node_modules', '.bin');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { bin?: Record<string, string> };

await mkdir(binDir, { recursive: true });
for (const [name, target] of Object.entries(pkg.bin ?? {})) {
  const file = join(root, target);
  await chmod(file, 0o755);
  if (process.platform === 'win32') {
    // Windows shells run .cmd shims, not symlinks.
    await writeFile(join(binDir, `${name}.cmd`), `@node "%~dp0\\${relative(binDir, file)}" %*\r\n`);
  } else {
    const link = join(binDir, name);
    await rm(link, { force: true });
    await symlink(relative(binDir, file), link);
  }
  console.log(`linked ${name} → ${target}`);
}
