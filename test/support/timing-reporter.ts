import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * A vitest reporter beside the default one: at the end of a run it prints, per project, how many
 * files and tests ran and the seconds its files took (summed: files of all projects run side by
 * side in the pool's workers), then the 25 slowest test files. A file's seconds are vitest's own
 * diagnostic of it: environment, setup, import and collection, then its tests and hooks. With
 * CLIPDESK_TEST_TIMINGS=FILE it also writes every file's time there as JSON, for docs/testing.md.
 */
/** One file's time, as `CLIPDESK_TEST_TIMINGS` writes it (read back by longest-first.ts). */
export interface FileTime {
  project: string;
  file: string;
  seconds: number;
  tests: number;
}

const SHOWN = 25;

export default class TimingReporter implements Reporter {
  private root = process.cwd();
  private startedAt = Date.now();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
    this.startedAt = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files: FileTime[] = [];
    const projects = new Map<string, { files: number; tests: number; skipped: number; seconds: number }>();
    for (const module of modules) {
      const d = module.diagnostic();
      const seconds =
        (d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000;
      let tests = 0;
      let skipped = 0;
      for (const test of module.children.allTests()) {
        if (test.result().state === 'skipped') skipped++;
        else tests++;
      }
      const project = module.project.name || '(root)';
      files.push({ project, file: relative(this.root, module.moduleId), seconds, tests });
      const sum = projects.get(project) ?? { files: 0, tests: 0, skipped: 0, seconds: 0 };
      projects.set(project, {
        files: sum.files + 1,
        tests: sum.tests + tests,
        skipped: sum.skipped + skipped,
        seconds: sum.seconds + seconds,
      });
    }
    if (files.length === 0) return;
    const wall = (Date.now() - this.startedAt) / 1000;
    const lines = [
      '',
      `Vitest projects (${wall.toFixed(0)} s wall clock in all; a project's seconds are its files' sum):`,
    ];
    for (const [name, p] of projects)
      lines.push(
        `  ${name.padEnd(16)} ${String(p.files).padStart(4)} files ${String(p.tests).padStart(5)} tests run ` +
          `${String(p.skipped).padStart(4)} skipped ${p.seconds.toFixed(1).padStart(8)} s`,
      );
    files.sort((a, b) => b.seconds - a.seconds);
    lines.push('', `The ${Math.min(SHOWN, files.length)} slowest test files (seconds):`);
    for (const f of files.slice(0, SHOWN))
      lines.push(`  ${f.seconds.toFixed(1).padStart(7)}  ${f.project.padEnd(16)} ${f.file}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    const out = process.env['CLIPDESK_TEST_TIMINGS'];
    if (out) {
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${JSON.stringify({ projects: Object.fromEntries(projects), files }, null, 2)}\n`);
    }
  }
}
