import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFindings, scanSpool } from './helpers/secret-scan.ts';
import { SPOOL_ENV } from './helpers/spool.ts';
import { createServerTemplate, dropServerDatabase, migratedPgliteDump, PGLITE_DUMP_ENV, SERVER_TEMPLATE_ENV } from './helpers/template-database.ts';

/**
 * Once per `vitest run`, before any worker starts; every worker inherits what is set in
 * process.env here. The returned teardown runs after the last test file.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const dropTemplate = await prepareTemplateDatabase();
  const scanSecrets = startSecretScan();
  return async () => {
    try {
      scanSecrets?.();
    } finally {
      await dropTemplate?.();
    }
  };
}

/**
 * The migrated database every test file's fresh database is copied from (test/helpers/database.ts,
 * docs/testing.md "A fresh database per test file"): on PostgreSQL a template database for this
 * run, dropped at its end; on PGlite a dump of a migrated data directory, kept between runs.
 */
async function prepareTemplateDatabase(): Promise<(() => Promise<void>) | undefined> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    process.env[PGLITE_DUMP_ENV] = await migratedPgliteDump();
    return undefined;
  }
  const template = await createServerTemplate(serverUrl);
  process.env[SERVER_TEMPLATE_ENV] = template;
  return () => dropServerDatabase(serverUrl, template);
}

/**
 * The secret-leak check of issue 14 (docs/testing.md): a fresh spool directory under the OS temp
 * directory for this run, which every worker inherits through OBSERVATORY_TEST_SPOOL; at the end
 * of the run everything spooled is scanned and a leak fails the run. OBSERVATORY_SECRET_SCAN=0
 * turns it off; OBSERVATORY_SECRET_SCAN_KEEP=1 keeps the spool of a clean run for reading.
 */
function startSecretScan(): (() => void) | undefined {
  if (process.env.OBSERVATORY_SECRET_SCAN === '0') return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'observatory-spool-'));
  process.env[SPOOL_ENV] = dir;
  return () => {
    const { findings, files, bytes } = scanSpool(dir);
    if (findings.length > 0) {
      throw new Error(`${describeFindings(findings)}\n(spool kept in ${dir})`);
    }
    const keep = process.env.OBSERVATORY_SECRET_SCAN_KEEP === '1';
    if (process.env.OBSERVATORY_SECRET_SCAN_VERBOSE === '1' || keep) {
      console.log(`secret scan: ${files} spool files, ${(bytes / 1e6).toFixed(1)} MB, no leaks${keep ? ` (kept in ${dir})` : ''}`);
    }
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
}
