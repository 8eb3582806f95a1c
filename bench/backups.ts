import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { createBackupsDomain } from '../src/domains/backups/wiring.ts';
import { systemClock } from '../src/platform/clock.ts';
import { loadConfig } from '../src/platform/config.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { eventCount, seedHoneypotEvents } from './honeypot-seed.ts';
import { type BenchContext, defineScenario } from './scenarios.ts';

/**
 * `backup-verify` (issue 15): seconds to snapshot, and to restore-verify, a database holding a
 * million honeypot events, and the snapshot file's size (docs/backups/README.md, "Measured").
 *
 * It drives the backups service directly rather than over HTTP: at this size both calls outlast
 * OBSERVATORY_REQUEST_TIMEOUT_MS. The service is built on the bench app's own database, with its
 * files in a temporary directory that is removed afterwards.
 */

const EVENTS = 1_000_000;
const TENANT = 'bench-backup';

async function seed(ctx: BenchContext): Promise<void> {
  const created = await ctx.api<{ tenant: { id: string } }>('POST', `${V1}/honeypot/tenants`, { slug: TENANT, name: 'Bench backup' });
  const tenantId = created.tenant.id;
  if ((await eventCount(ctx.app, tenantId)) >= EVENTS) return;
  const started = performance.now();
  await seedHoneypotEvents(ctx.app, tenantId, EVENTS);
  process.stdout.write(`  (seeded ${EVENTS.toLocaleString('en')} events into ${TENANT} in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

export const backupVerifyScenario = defineScenario({
  name: 'backup-verify',
  description: `Snapshot (pg_dump custom format / PGlite data-directory tarball, with per-table counts and hashes) and restore-verify (restore into a scratch database, recount, re-hash) of a database holding ${EVENTS.toLocaleString('en')} honeypot events.`,
  setupBudgetSec: 1800,
  setup: seed,
  async measure(ctx) {
    const dir = mkdtempSync(join(tmpdir(), 'observatory-bench-backups-'));
    try {
      const config = loadConfig({ OBSERVATORY_BACKUP_DIR: dir, OBSERVATORY_BACKUP_SCRATCH_PREFIX: 'obs_restore_bench', LOG_LEVEL: 'warn' });
      const { service } = createBackupsDomain({ database: ctx.app.database, clock: systemClock, audit: ctx.app.audit, config, log: pino({ level: 'warn' }), bridgeTokens: ctx.app.faults.bridgeTokens });
      // The process's resident memory, sampled while the two calls run (PGlite blocks the event loop
      // during long statements, so a peak inside one may be missed), against what it was before.
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      }, 100);
      let snapshot: Awaited<ReturnType<typeof service.takeSnapshot>>;
      let verification: Awaited<ReturnType<typeof service.verifySnapshot>>;
      let snapshotSec: number;
      let verifySec: number;
      try {
        const snapshotStarted = performance.now();
        snapshot = await service.takeSnapshot({ source: 'manual' });
        snapshotSec = (performance.now() - snapshotStarted) / 1000;
        const verifyStarted = performance.now();
        verification = await service.verifySnapshot(snapshot.id, { trigger: 'job' });
        verifySec = (performance.now() - verifyStarted) / 1000;
      } finally {
        clearInterval(sampler);
      }
      if (verification.outcome !== 'ok') throw new Error(`backup-verify: the verification ended ${verification.outcome}: ${verification.errorText}`);
      const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
      return {
        honeypotEvents: snapshot.byTable.honeypot_events ?? 0,
        snapshotSec: round(snapshotSec),
        verifySec: round(verifySec),
        fileMiB: round(snapshot.sizeBytes / 2 ** 20),
        rssBeforeMiB: round(rssBefore / 2 ** 20, 0),
        rssPeakSampledMiB: round(rssPeak / 2 ** 20, 0),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
