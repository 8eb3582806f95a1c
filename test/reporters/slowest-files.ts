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
    const timed = testModules
      .map((module) => {
        const d = module.diagnostic();
        const loading = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration;
        return { file: relative(vitest.config.root, module.moduleId), loading, tests: d.duration, total: loading + d.duration };
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, SHOWN);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
    const lines = timed.map(({ file, loading, tests, total }) => `${seconds(total)}  (import ${seconds(loading).trim()}, tests ${seconds(tests).trim()})  ${file}`);
    vitest.logger.log(`\n Slowest ${timed.length} test files (of ${testModules.length}):\n${lines.map((line) => `  ${line}`).join('\n')}\n`);
  }
}
