// docs/cli.md "Installing on Node 20" says which dependencies make `npm install` on Node 20 print
// EBADENGINE and how many warnings there are: the lock file decides both, so they are read from it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import semver from 'semver';

const root = new URL('../../../', import.meta.url);
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } }>;
};
const docs = readFileSync(new URL('docs/cli.md', root), 'utf8');
/** The section, its line breaks as spaces (prose may wrap anywhere). */
const section = docs
  .slice(docs.indexOf('### Installing on Node 20'), docs.indexOf('\n## ', docs.indexOf('### Installing on Node 20')))
  .replace(/\s+/g, ' ');

/** Installed copies (lock paths) whose `engines.node` admits no Node 20: npm warns once for each. */
function refusingNode20(): string[] {
  return Object.entries(lock.packages)
    .filter(([path, info]) => {
      const range = info.engines?.node;
      return (
        path !== '' && range !== undefined && semver.validRange(range) !== null && !semver.intersects(range, '20.x')
      );
    })
    .map(([path]) => path);
}

describe('npm install on Node 20', () => {
  it("docs/cli.md names every dependency npm warns about, and the warnings' number", () => {
    const copies = refusingNode20();
    expect(copies.length).toBeGreaterThan(0);
    expect(section).toContain(`prints ${copies.length} \`EBADENGINE\` warnings`);
    const names = [
      ...new Set(copies.map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))),
    ];
    expect(section).toContain(`${copies.length} installed copies of ${names.length} dependencies`);
    for (const name of names) expect(section, name).toContain(`\`${name}\``);
  });

  it('the package itself admits Node 20 (the bins run again under the pinned Node)', () => {
    const own = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } })
      .engines;
    expect(semver.intersects(own.node, '20.x')).toBe(true);
  });
});
