// Prints statement and branch coverage per source folder (server/, electron/, shared/, renderer/)
// from vitest's v8 coverage summary (coverage/coverage-summary.json, the `json-summary` reporter
// set in vitest.config.ts): `npm run test:coverage` runs the suite with coverage, then this.
// docs/testing.md records the figures; a change may not lower any of them.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

interface Counts {
  total: number;
  covered: number;
}
type Summary = Record<string, { statements: Counts; branches: Counts }>;

const FOLDERS = ['server', 'electron', 'shared', 'renderer'] as const;
const root = resolve(import.meta.dirname, '..');
const file = resolve(root, process.argv[2] ?? 'coverage/coverage-summary.json');
const summary = JSON.parse(readFileSync(file, 'utf8')) as Summary;

const sums = new Map<string, { statements: Counts; branches: Counts }>();
for (const folder of FOLDERS) sums.set(folder, { statements: zero(), branches: zero() });
for (const [path, counts] of Object.entries(summary)) {
  if (path === 'total') continue;
  const folder = relative(root, path).split(/[\\/]/)[0] ?? '';
  const sum = sums.get(folder);
  if (!sum) continue;
  add(sum.statements, counts.statements);
  add(sum.branches, counts.branches);
}

console.log('folder      statements            branches');
for (const [folder, sum] of sums)
  console.log(`${`${folder}/`.padEnd(11)} ${pct(sum.statements).padEnd(21)} ${pct(sum.branches)}`);

function zero(): Counts {
  return { total: 0, covered: 0 };
}

function add(into: Counts, from: Counts): void {
  into.total += from.total;
  into.covered += from.covered;
}

function pct(c: Counts): string {
  const value = c.total === 0 ? 100 : (100 * c.covered) / c.total;
  return `${value.toFixed(2)}% (${c.covered}/${c.total})`;
}
