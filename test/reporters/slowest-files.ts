import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

/** How many files the list names. */
const SHOWN = 15;

/**
 * Prints the slowest test files at the end of `vitest run` (docs/testing.md, "Keeping the suite
 * quick"), beside the default reporter: where the minutes of a run go, so a file that grows slow
 * is seen the run it does. A file's time is what its worker spent on it: importing it (with the
 * modules it loads) and running its hooks and tests.
 */
export default class SlowestFilesReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const vitest = this.vitest;
    if (!vitest || vitest.config.watch || testModules.length === 0) return;
    const all = testModules
      .map((module) => {
        const d = module.diagnostic();
        const loading = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration;
        return { file: relative(vitest.config.root, module.moduleId), loading, tests: d.duration, total: loading + d.duration };
      })
      .sort((a, b) => b.total - a.total);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
    const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;
    const sum = (pick: (t: (typeof all)[number]) => number) => all.reduce((total, t) => total + pick(t), 0);
    const lines = all
      .slice(0, SHOWN)
      .map(({ file, loading, tests, total }) => `${seconds(total)}  (import ${seconds(loading).trim()}, tests ${seconds(tests).trim()})  ${file}`);
    vitest.logger.log(
      [
        '',
        ` Slowest ${lines.length} test files (of ${all.length}):`,
        ...lines.map((line) => `  ${line}`),
        `  All files: ${minutes(sum((t) => t.total))} of worker time (import ${minutes(sum((t) => t.loading))}, tests ${minutes(sum((t) => t.tests))})`,
        '',
      ].join('\n'),
    );
  }
}
