import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The HTTP layer reads records itself but writes nothing (docs/architecture.md, "The service's
// layers"): what writes goes through the generation layer, which owns the rules. The import
// graph (.dependency-cruiser.cjs, http-reads-storage-records-only) names the storage modules it
// may read; this checks that what it runs of them, and of the context's database, only reads.
const ROOT = join(import.meta.dirname, '../../..');

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return walk(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const files = walk('server/http').map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

/** Names a module of server/http imports from server/storage. */
function storageImports(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'[./]*storage\/[^']+'/g)) {
    for (const name of (m[1] ?? '').split(',')) {
      const bare = name
        .replace(/^\s*type\s+/, '')
        .trim()
        .split(/\s+as\s+/)[0];
      if (bare) names.push(bare);
    }
  }
  return names;
}

describe('server/http writes nothing itself', () => {
  it('runs no SQL write and calls no database run()', () => {
    const writes = files.filter(({ text }) =>
      /\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b|\b(db|sql|tx|conn|stmt|statement)\.run\(/i.test(text),
    );
    expect(writes.map((f) => f.path)).toEqual([]);
  });

  it('imports no write of the storage layer', () => {
    const named = files.flatMap(({ path, text }) => storageImports(text).map((name) => `${path}: ${name}`));
    expect(named.length).toBeGreaterThan(5);
    const writes = named.filter((n) => /: (insert|update|delete|claim|complete|end|release|mark|put|take)/i.test(n));
    expect(writes).toEqual([]);
  });
});
