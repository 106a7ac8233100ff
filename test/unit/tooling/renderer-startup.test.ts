import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// docs/architecture.md, "The renderer's bundle": the app's first screen loads no schema library.
// zod's schemas are built when their module is evaluated, and one value import of a schema module
// (or of a barrel that re-exports one) puts every schema of the contract in the startup bundle:
// that was 120 KB and 40 % of the first paint. This walks the modules the entry loads before its
// first render, following value imports and re-exports only (type imports are erased, and a
// dynamic `import()` is a screen loaded later), as the bundler does.
const ROOT = join(import.meta.dirname, '../../..');
const ENTRY = join(ROOT, 'renderer/src/main.tsx');
/** Packages the first screen must not load. */
const KEPT_OFF = ['zod', '@orpc/contract', '@orpc/server'];

/** The specifiers a module loads at once: value imports and re-exports, not types, not `import()`. */
function staticValueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) found.push(statement.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(statement) &&
      !statement.isTypeOnly &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      found.push(statement.moduleSpecifier.text);
    }
  }
  return found;
}

/** Every module the entry loads before it runs, each with the chain that brought it in. */
function startupGraph(entry: string): { files: Map<string, string[]>; packages: Map<string, string[]> } {
  const files = new Map<string, string[]>([[entry, [entry]]]);
  const packages = new Map<string, string[]>();
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const chain = files.get(file)!;
    for (const specifier of staticValueImports(file)) {
      if (!specifier.startsWith('.')) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!packages.has(name)) packages.set(name, [...chain, specifier]);
        continue;
      }
      const target = resolve(dirname(file), specifier);
      if (/\.css$/.test(target) || files.has(target) || !existsSync(target)) continue;
      files.set(target, [...chain, target]);
      queue.push(target);
    }
  }
  return { files, packages };
}

const readable = (chain: string[]) => chain.map((f) => (f.startsWith(ROOT) ? relative(ROOT, f) : f)).join(' → ');

describe("the renderer's startup path", () => {
  const graph = startupGraph(ENTRY);

  it('is walked through the app (the walk itself finds what it should)', () => {
    const names = [...graph.files.keys()].map((f) => relative(ROOT, f));
    expect(names).toContain('renderer/src/App.tsx');
    expect(names).toContain('renderer/src/features/compose/components/ComposeScreen.tsx');
    expect(names).toContain('shared/api/constants.ts');
    // The other screens are loaded when first opened.
    expect(names).not.toContain('renderer/src/features/library/components/LibraryScreen.tsx');
    expect([...graph.packages.keys()]).toEqual(expect.arrayContaining(['react', 'react-dom', 'zustand']));
  });

  it.each(KEPT_OFF)('does not load %s', (name) => {
    const chain = graph.packages.get(name);
    expect(chain === undefined ? 'not loaded' : readable(chain)).toBe('not loaded');
  });
});
