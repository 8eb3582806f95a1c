import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Each test file opens its own database (PGlite in memory, or a fresh database on the server
    // named by DATABASE_URL); two workers match the two cores CI has.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // Secrets never leak (issue 14): each worker spools its apps' log lines and responses, and the
    // end of the run scans them (test/global-setup.ts, docs/testing.md).
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/spool-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
