import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFindings, scanSpool } from './helpers/secret-scan.ts';
import { SPOOL_ENV } from './helpers/spool.ts';

/**
 * The secret-leak check of issue 14 (docs/testing.md): a fresh spool directory under the OS temp
 * directory for this run, which every worker inherits through OBSERVATORY_TEST_SPOOL; at the end
 * of the run everything spooled is scanned and a leak fails the run. OBSERVATORY_SECRET_SCAN=0
 * turns it off; OBSERVATORY_SECRET_SCAN_KEEP=1 keeps the spool of a clean run for reading.
 */
export default function setup(): (() => void) | undefined {
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
