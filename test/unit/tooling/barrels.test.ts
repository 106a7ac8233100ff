import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

// A folder's index.ts is what the rest of the repository may use of it, and no more
// (docs/architecture.md, "The import graph"): every name it exports is imported from it by a
// file outside the folder (the app's other parts, or tests of its behaviour).
const ROOT = join(import.meta.dirname, '../../..');
// The core's folders (core/engine's is left to whoever next changes it).
const BARRELS = [
  'api',
  'downloads',
  'jobs',
  'ledger',
  'library',
  'media',
  'profiles',
  'providers',
  'secrets',
  'uploads',
].map((folder) => `electron/core/${folder}/index.ts`);
const ROOTS = ['electron', 'server', 'shared', 'renderer/src', 'scripts', 'bench', 'test'];

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The names in `{ a, type B, c as d }`: as exported (`d`) or as imported from the module (`c`). */
function names(list: string, side: 'exported' | 'imported'): string[] {
  return list
    .split(',')
    .map((n) => n.trim().replace(/^type\s+/, ''))
    .filter(Boolean)
    .map((n) => n.split(/\s+as\s+/)[side === 'exported' ? 1 : 0] ?? n)
    .map((n) => n.trim());
}

const FROM = /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/g;

function exportedBy(barrel: string): string[] {
  const text = readFileSync(join(ROOT, barrel), 'utf8');
  return [...text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}\s*from/g)].flatMap((m) => names(m[1]!, 'exported'));
}

function importedFrom(barrel: string, files: string[]): Set<string> {
  const used = new Set<string>();
  for (const file of files.filter((f) => !f.startsWith(`${dirname(barrel)}/`))) {
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(FROM)) {
      if (normalize(join(dirname(file), m[2]!)) === barrel) for (const n of names(m[1]!, 'imported')) used.add(n);
    }
  }
  return used;
}

describe('barrels', () => {
  const files = ROOTS.flatMap(walk);
  it.each(BARRELS)('%s exports only what is used outside its folder', (barrel) => {
    const used = importedFrom(barrel, files);
    expect(exportedBy(barrel).filter((n) => !used.has(n))).toEqual([]);
  });

  it('the check sees a barrel’s imports (a name no one imports would be caught)', () => {
    const used = importedFrom('electron/core/jobs/index.ts', files);
    expect(used.has('createJobQueue')).toBe(true);
    expect(used.has('needsUpload')).toBe(false);
  });
});
