import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Each test file opens its own database (PGlite in memory, or a fresh database on the server
    // named by DATABASE_URL), copied from one migrated once per run; two workers match the two
    // cores CI has.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The migrated database every file's fresh one is copied from, and the secret-leak check of
    // issue 14 (each worker spools its apps' log lines and responses, the end of the run scans
    // them): test/global-setup.ts, docs/testing.md.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/spool-setup.ts'],
    // The slowest files are listed after the summary (docs/testing.md, "Keeping the suite quick").
    reporters: ['default', './test/reporters/slowest-files.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
