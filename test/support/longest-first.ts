import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';
import type { FileTime } from './timing-reporter.ts';

/**
 * The order vitest starts files in (vitest.config.ts, `sequence.sequencer`): the longest first,
 * across all projects, by the times of a recorded run (test/support/file-times.json; files it does
 * not know first of all, as vitest's own order does). Vitest's default runs the projects one after
 * the other and, in a clean checkout, larger files first: the PostgreSQL pass's files, which wait
 * out leases, then ran together, and the run ended on one long file. Longest first mixes the files
 * that wait with those that compute and ends on short ones (docs/testing.md, "Workers, pool and
 * isolation"). The order changes nothing a test sees: each file has its own process, database and
 * bucket.
 *
 * To record the times again: `CLIPDESK_TEST_TIMINGS=test/support/file-times.json npx vitest run`.
 */
export default class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recordedSeconds();
    const expected = (spec: TestSpecification): number =>
      seconds.get(`${spec.project.name} ${relative(process.cwd(), spec.moduleId)}`) ?? Number.MAX_VALUE;
    return Promise.resolve([...files].sort((a, b) => expected(b) - expected(a)));
  }
}

function recordedSeconds(): Map<string, number> {
  const url = new URL('./file-times.json', import.meta.url);
  const run = JSON.parse(readFileSync(url, 'utf8')) as { files: FileTime[] };
  return new Map(run.files.map((f) => [`${f.project} ${f.file}`, f.seconds]));
}
