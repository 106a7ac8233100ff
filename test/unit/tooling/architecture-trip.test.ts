import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/architecture.md, "A generation's trip", names each shape a generation takes with the file
// that defines it. A reader follows it to the code, so a type it names must be exported by the
// file named beside it: renaming or moving one fails here until the docs say where it went.
const ROOT = join(import.meta.dirname, '../../..');
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

/** The section's text: from its heading to the next `## ` heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) return '';
  const next = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, next < 0 ? undefined : next);
}

/** `Name (path/to/file.ts)`, the name in backticks or not: a type and the file that defines it. */
const NAMED_TYPE = /`?\b([A-Z][A-Za-z0-9]*)`?\s+\(((?:renderer|electron|shared|server)\/[\w./-]+\.tsx?)\)/g;

function namedTypes(text: string): { name: string; file: string }[] {
  return [...text.matchAll(NAMED_TYPE)].map((m) => ({ name: m[1]!, file: m[2]! }));
}

/** Whether the source exports `name`: declared with `export`, or in an `export { … }` list. */
function exports(source: string, name: string): boolean {
  const declared = new RegExp(
    `^export\\s+(?:declare\\s+)?(?:interface|type|const|class|function|enum)\\s+${name}\\b`,
    'm',
  );
  const listed = new RegExp(`^export\\s+(?:type\\s+)?\\{[^}]*\\b${name}\\b[^}]*\\}`, 'm');
  return declared.test(source) || listed.test(source);
}

const trip = section(DOC, "A generation's trip");
const named = namedTypes(trip);

describe("docs/architecture.md, A generation's trip", () => {
  it('names the five shapes of a request, each with its file', () => {
    expect(trip).not.toBe('');
    const names = named.map((n) => n.name);
    for (const shape of ['ComposeState', 'Job', 'VideoGenerationRequest', 'GenerationPlan', 'ProviderTask'])
      expect(names, `${shape} is named with its file`).toContain(shape);
  });

  it('names only files that exist and types those files export', () => {
    const wrong = named.flatMap(({ name, file }) => {
      const path = join(ROOT, file);
      if (!existsSync(path)) return [`${name} (${file}): no such file`];
      return exports(readFileSync(path, 'utf8'), name) ? [] : [`${name} (${file}): not exported there`];
    });
    expect(wrong).toEqual([]);
  });

  it('reads what the docs write: a name beside a path, in backticks or not', () => {
    expect(namedTypes('`Draft` (server/generation/plan.ts) and Job (electron/core/jobs/state.ts)')).toEqual([
      { name: 'Draft', file: 'server/generation/plan.ts' },
      { name: 'Job', file: 'electron/core/jobs/state.ts' },
    ]);
    expect(exports('export type Draft = Omit<A, "b">;', 'Draft')).toBe(true);
    expect(exports('export const JobRequest = z.object({});', 'JobRequest')).toBe(true);
    expect(exports('export type { Job, NewJob } from "./state.ts";', 'NewJob')).toBe(true);
    expect(exports('type Draft = {};', 'Draft')).toBe(false);
    expect(exports('export type Drafts = {};', 'Draft')).toBe(false);
  });
});
