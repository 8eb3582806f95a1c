import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * CI's PostgreSQL pass (`.ci/run`) sets OBSERVATORY_TEST_STORAGE_ONLY=1: the files that cannot
 * reach a database (test/storage-files.ts) ran on PGlite already and would run the same again.
 * Neither do the console's browser tests run twice: they drive the pages in Chromium over the
 * endpoints the HTTP tests already run on both drivers, so a second pass would test the browser
 * again, not the storage.
 */
async function storageFreeFiles(): Promise<string[]> {
  if (process.env.OBSERVATORY_TEST_STORAGE_ONLY !== '1') return [];
  const { storageFreeTestFiles, testFilesUnder } = await import('./test/storage-files.ts');
  const root = fileURLToPath(new URL('.', import.meta.url));
  return [...storageFreeTestFiles(testFilesUnder(root, ['src', 'test']), root), 'test/console/*.browser.test.ts'];
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(await storageFreeFiles())],
    // Each test file opens its own database (PGlite in memory, or a fresh database on the server
    // named by DATABASE_URL), copied from one migrated once per run; two workers match the two
    // cores CI has.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The migrated database every file's fresh one is copied from, and the secret-leak check
    // (each worker spools its apps' log lines and responses, the end of the run scans
    // them): test/global-setup.ts, docs/testing.md.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/spool-setup.ts'],
    // The slowest files are listed after the summary (docs/testing.md, "Keeping the suite quick").
    reporters: ['default', './test/reporters/slowest-files.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
