import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

// What the code's comments may say (docs/architecture.md, "The import graph"): a file they
// name exists, and they cite docs/ pages, never issue numbers.
const ROOT = join(import.meta.dirname, '../../..');
const SOURCE_ROOTS = ['electron', 'server', 'shared', 'renderer/src', 'scripts', 'bench'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.tsbuild', 'coverage']);

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : walk(path);
    return /\.(ts|tsx|cjs|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Every file of the repository a comment could name (tests, docs, fixtures and configs included). */
const repoFiles = ['.', 'test', 'docs', 'eslint', 'resources', ...SOURCE_ROOTS]
  .flatMap((dir) =>
    dir === '.'
      ? readdirSync(ROOT, { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name)
      : existsSync(join(ROOT, dir))
        ? walkAll(dir)
        : [],
  )
  .filter((f, i, all) => all.indexOf(f) === i);
const repoFileSet = new Set(repoFiles);

function walkAll(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : walkAll(path);
    return [path];
  });
}

interface CommentLine {
  where: string;
  text: string;
}

/** The comment part of each line: a line of a block comment, or what follows `//`. */
function commentLines(file: string): CommentLine[] {
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line, i) => {
      const trimmed = line.trim();
      const where = `${file}:${i + 1}`;
      if (/^(\/\/|\*|\/\*)/.test(trimmed)) return [{ where, text: trimmed }];
      const at = line.search(/(?<![:'"`])\/\/ /);
      return at >= 0 ? [{ where, text: line.slice(at) }] : [];
    });
}

const commentsIn = (roots: string[]) =>
  roots.flatMap(walk).flatMap((file) => commentLines(file).map((c) => ({ ...c, file })));
const comments = commentsIn(SOURCE_ROOTS);

/** A path named in a comment: `dir/file.ext` with one of the repository's extensions. */
const NAMED_PATH = /(?<![\w./@:<-])((?:[\w.-]+\/)+[\w.-]+\.(?:ts|tsx|md|json|cjs|mjs|css|yml|yaml|sh))\b/g;
/** Paths that name a build's output or a placeholder (`DATA/catalog.json`), not a file of the repository. */
const NOT_IN_REPO = /^(dist|build|coverage)\/|^[A-Z]+\//;

/** The path as written from the root, from the commenting file's folder, or as the tail of a known path. */
function named(path: string, from: string): boolean {
  if (repoFileSet.has(path) || repoFileSet.has(normalize(join(dirname(from), path)))) return true;
  return repoFiles.some((f) => f.endsWith(`/${path}`));
}

describe('comments', () => {
  it('name only files that exist', () => {
    const stale = comments.flatMap(({ where, text, file }) =>
      [...text.matchAll(NAMED_PATH)]
        .map((m) => m[1]!)
        .filter((path) => !NOT_IN_REPO.test(path) && !named(path, file))
        .map((path) => `${where}: ${path}`),
    );
    expect(stale).toEqual([]);
  });

  it('the scan sees the paths comments name (it would catch a stale one)', () => {
    const found = comments.flatMap(({ text }) => [...text.matchAll(NAMED_PATH)].map((m) => m[1]!));
    expect(found.length).toBeGreaterThan(300);
    expect(found).toContain('docs/architecture.md');
    expect(named('server/routing/preview.ts', 'electron/app/submit-route.ts')).toBe(false);
  });

  it('cite docs/ pages, never issue numbers', () => {
    const citing = commentsIn([...SOURCE_ROOTS, 'test'])
      .filter(({ text }) => /\bIssue \d+|\bissue #?\d+/i.test(text))
      .map((c) => c.where);
    expect(citing).toEqual([]);
  });
});
