import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, checkFile, docFiles, headingSlug } from '../../../scripts/check-docs.ts';

// The docs check must fail on what it exists to catch (a missing page, a renamed heading) and pass
// the repository's own pages, so a broken link cannot reach main.
describe('docs check', () => {
  it('slugs headings as GitHub does', () => {
    expect(headingSlug('`GET /media`: search and listing')).toBe('get-media-search-and-listing');
    expect(headingSlug('On PostgreSQL (several nodes)')).toBe('on-postgresql-several-nodes');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
  });

  it('reports a missing file and a missing anchor, and skips code and external links', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-check-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'a.md'), '# A\n\n## Real heading\n');
    writeFileSync(
      join(dir, 'README.md'),
      [
        '[ok](docs/a.md#real-heading) [self](#top) [web](https://example.com/x#y)',
        '[gone](docs/missing.md) [bad anchor](docs/a.md#renamed)',
        '`[code](nowhere.md)`',
        '```',
        '[fenced](nowhere.md)',
        '```',
        '# Top',
      ].join('\n'),
    );
    const broken = docFiles(dir).flatMap((file) => checkFile(file));
    expect(broken.map((b) => [b.line, b.target, b.reason])).toEqual([
      [2, 'docs/missing.md', 'no such file'],
      [2, 'docs/a.md#renamed', 'no such heading'],
    ]);
  });

  it("passes the repository's README.md and docs/", () => {
    const root = join(import.meta.dirname, '..', '..', '..');
    expect(docFiles(root).flatMap((file) => checkFile(file))).toEqual([]);
  });
});
