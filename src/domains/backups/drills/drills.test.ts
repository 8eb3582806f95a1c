import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { auditFacts } from '../../../platform/audit/schema.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import * as repo from './repository.ts';
import { FEDERATION_UNMEASURED, STALE_RUNNING_MS } from './service.ts';

/**
 * Region failover drills through the HTTP API (docs/backups/README.md, "Failover drills"), on whichever
 * driver the run uses (PGlite; PostgreSQL with DATABASE_URL: pg_dump and pg_restore for real).
 * Each drill really restores a snapshot into a scratch database. Time is the injected clock.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const TARGET_SEC = 3600;

let t: TestApp;
let backupDir: string;
const clock = new ManualClock('2026-11-16T03:00:00.000Z');

interface Drill {
  id: string;
  region: string;
  trigger: string;
  actor: string | null;
  startedAt: string;
  endedAt: string | null;
  outcome: 'ok' | 'drift' | 'error' | null;
  errorText: string | null;
  observedBadge: string | null;
  badgeSource: string;
  federationLagSec: number | null;
  unmeasured: string[];
  snapshotId: string | null;
  snapshotTaken: boolean | null;
  verificationId: string | null;
  verificationOutcome: string | null;
  recoverySec: number | null;
  dataLossWindowSec: number | null;
  writeRoundTripMs: number | null;
  resolvedDrillIds: string[];
  resolvedAt: string | null;
  resolvedBy: string | null;
  resolveNote: string | null;
}
interface RunAnswer {
  skipped: boolean;
  skipReason: string | null;
  drill: Drill | null;
}

async function runDrill(token?: string): Promise<RunAnswer> {
  const res = await t.call({ method: 'POST', url: `${V1}/backups/drills/run`, payload: {}, ...(token ? { token } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().schema).toBe('svc-region-failover-drill.v1');
  return res.json<RunAnswer>();
}

async function ranDrill(): Promise<Drill> {
  const answer = await runDrill();
  expect(answer.skipped, answer.skipReason ?? '').toBe(false);
  expect(answer.skipReason).toBeNull();
  return answer.drill!;
}

/** Removes the file of the newest snapshot, so restoring it fails. */
async function removeNewestSnapshotFile(): Promise<string> {
  const res = await t.call({ method: 'GET', url: `${V1}/backups/snapshots`, query: { limit: '1' } });
  expect(res.statusCode, res.body).toBe(200);
  const [snapshot] = res.json().snapshots as { id: string; providerSnapshotId: string }[];
  await rm(join(backupDir, snapshot!.providerSnapshotId));
  return snapshot!.id;
}

async function operatorRows(verb: string): Promise<{ verb: string; target: string; actor: string | null; before: unknown; after: Record<string, unknown> }[]> {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb, limit: '100' } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().rows;
}

const drillFacts = (id: string) =>
  t.app.database.db.select().from(auditFacts).where(and(eq(auditFacts.source, 'RegionFailoverDrill'), eq(auditFacts.sourceId, id)));

beforeAll(async () => {
  backupDir = await mkdtemp(join(tmpdir(), 'obs-drills-'));
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_BACKUP_DIR: backupDir,
      OBSERVATORY_REGION: 'eu-test',
      OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC: String(TARGET_SEC),
      OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0',
    },
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await rm(backupDir, { recursive: true, force: true });
});

describe('region failover drills', () => {
  let first: Drill;

  it('with no snapshot yet, takes one, restores it for real and ends drift: there was nothing to recover from', async () => {
    first = await ranDrill();
    expect(first).toMatchObject({
      region: 'eu-test',
      trigger: 'manual',
      actor: 'admin',
      outcome: 'drift',
      observedBadge: 'yellow',
      badgeSource: 'drill',
      federationLagSec: null,
      snapshotTaken: true,
      verificationOutcome: 'ok',
      dataLossWindowSec: null,
      startedAt: clock.now().toISOString(),
      endedAt: clock.now().toISOString(),
    });
    expect(first.errorText).toMatch(/no snapshot existed when the drill started/);
    expect(first.unmeasured).toEqual([FEDERATION_UNMEASURED, 'dataLossWindowSec: no snapshot existed when the drill started']);
    expect(first.snapshotId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.recoverySec).toBeGreaterThan(0);
    expect(first.writeRoundTripMs).toBeGreaterThanOrEqual(0);
    // The verification the drill ran is on the ladder like any other.
    const ladder = (await t.call({ method: 'GET', url: `${V1}/backups/ladder` })).json();
    expect(ladder.rows.map((r: { id: string }) => r.id)).toContain(first.verificationId);
  }, 120_000);

  it('restores the newest snapshot when it is within the target: ok, green, with recovery time and data-loss window; an audit fact and an operator row', async () => {
    clock.advance(10 * MINUTE);
    const drill = await ranDrill();
    expect(drill).toMatchObject({
      outcome: 'ok',
      errorText: null,
      observedBadge: 'green',
      snapshotTaken: false,
      snapshotId: first.snapshotId,
      dataLossWindowSec: 600,
      verificationOutcome: 'ok',
      unmeasured: [FEDERATION_UNMEASURED],
    });
    expect(drill.recoverySec).toBeGreaterThan(0);
    expect(drill.verificationId).not.toBe(first.verificationId);

    const facts = await drillFacts(drill.id);
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({ kind: 'region-drill', actor: 'admin' });
    expect(facts[0]!.payload).toMatchObject({ id: drill.id, outcome: 'ok', observedBadge: 'green', dataLossWindowSec: 600, federationLagSec: null });
    const rows = await operatorRows('backup.drill-run');
    expect(rows.find((r) => r.target === `drill:${drill.id}`)).toMatchObject({ actor: 'admin', after: { id: drill.id, outcome: 'ok' } });
  }, 120_000);

  it('ends drift when the newest snapshot is older than the data-loss target, after restoring a fresh one', async () => {
    clock.advance(2 * HOUR);
    const drill = await ranDrill();
    expect(drill).toMatchObject({ outcome: 'drift', observedBadge: 'yellow', snapshotTaken: true, dataLossWindowSec: 7800, verificationOutcome: 'ok' });
    expect(drill.snapshotId).not.toBe(first.snapshotId);
    expect(drill.errorText).toBe(`data-loss window 7800 s exceeds the target of ${TARGET_SEC} s`);
  }, 120_000);

  it('an error drill refuses manual runs and the job for 24 hours of the clock; an operator resolve lets the next one run', async () => {
    clock.advance(MINUTE);
    const brokenSnapshot = await removeNewestSnapshotFile();
    const failed = await ranDrill();
    expect(failed).toMatchObject({ outcome: 'error', observedBadge: 'red', snapshotId: brokenSnapshot, verificationOutcome: 'error', recoverySec: null, resolvedAt: null });
    expect(failed.errorText).toMatch(new RegExp(`^restore of snapshot ${brokenSnapshot} failed: .*missing`));
    expect(failed.unmeasured).toContain('recoverySec: no restore completed');
    expect((await drillFacts(failed.id))[0]!.payload).toMatchObject({ outcome: 'error' });

    const refused = await runDrill();
    expect(refused.skipped).toBe(true);
    expect(refused.drill).toBeNull();
    expect(refused.skipReason).toContain(`Drill ${failed.id} of region eu-test ended in error`);
    const skippedRows = (await operatorRows('backup.drill-run')).filter((r) => r.target === 'region:eu-test');
    expect(skippedRows[0]?.after).toEqual({ skipped: true, skipReason: refused.skipReason });

    // The job takes the same path: its run is ok and its stats say skipped.
    const job = await t.call({ method: 'POST', url: `${V1}/ops/jobs/region-failover-drill/run`, payload: {} });
    expect(job.statusCode, job.body).toBe(200);
    expect(job.json().run).toMatchObject({ outcome: 'ok', stats: { skipped: true, skipReason: refused.skipReason } });

    clock.advance(23 * HOUR + 58 * MINUTE);
    expect((await runDrill()).skipped).toBe(true);

    const resolved = await t.call({ method: 'POST', url: `${V1}/backups/drills/${failed.id}/resolve`, payload: { note: 'bucket permissions fixed' } });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(resolved.json()).toMatchObject({ schema: 'svc-region-failover-drill-resolve.v1', ok: true, drill: { id: failed.id, resolvedBy: 'admin', resolveNote: 'bucket permissions fixed', resolvedAt: clock.now().toISOString() } });
    const resolveRow = (await operatorRows('backup.drill-resolve')).find((r) => r.target === `drill:${failed.id}`);
    expect(resolveRow).toMatchObject({ before: { resolvedAt: null }, after: { resolveNote: 'bucket permissions fixed' } });

    const again = await t.call({ method: 'POST', url: `${V1}/backups/drills/${failed.id}/resolve`, payload: { note: 'twice' } });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
    expect(again.json().human).toMatch(/already resolved/);

    // Resolved: the next run goes ahead (the broken snapshot is now older than the target, so a fresh one is restored).
    const next = await ranDrill();
    expect(next).toMatchObject({ outcome: 'drift', snapshotTaken: true, verificationOutcome: 'ok', resolvedDrillIds: [] });
  }, 240_000);

  it('the refusal lapses 24 hours after the error drill ended, and a later ok drill resolves it', async () => {
    clock.advance(MINUTE);
    await removeNewestSnapshotFile();
    const failed = await ranDrill();
    expect(failed.outcome).toBe('error');
    clock.advance(24 * HOUR - 1);
    expect((await runDrill()).skipped).toBe(true);
    // Exactly 24 hours after it ended it is still "from the last 24 hours"; one millisecond later it is not.
    clock.advance(1);
    expect((await runDrill()).skipped).toBe(true);
    clock.advance(1);
    // A fresh snapshot, so the next drill's data-loss window is within the target and it can end ok.
    const snap = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(snap.statusCode, snap.body).toBe(200);
    const ok = await ranDrill();
    expect(ok).toMatchObject({ outcome: 'ok', resolvedDrillIds: [failed.id] });
    const list = (await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { limit: '2' } })).json();
    expect(list.drills.map((d: Drill) => d.id)).toEqual([ok.id, failed.id]);
    expect(list.drills[1]).toMatchObject({ resolvedBy: `drill:${ok.id}`, resolvedAt: ok.endedAt });
    // Resolving it by hand now is a conflict; so is resolving a drill that is not an error.
    const late = await t.call({ method: 'POST', url: `${V1}/backups/drills/${failed.id}/resolve`, payload: { note: 'late' } });
    expect(late.statusCode).toBe(409);
    const notError = await t.call({ method: 'POST', url: `${V1}/backups/drills/${ok.id}/resolve`, payload: { note: 'x' } });
    expect(notError.statusCode).toBe(409);
    expect(notError.json().human).toMatch(/ended ok; only error drills are resolved/);
  }, 240_000);

  it('never runs two drills of a region at once', async () => {
    clock.advance(MINUTE);
    const answers = await Promise.all([runDrill(), runDrill()]);
    const ran = answers.filter((a) => !a.skipped);
    const skipped = answers.filter((a) => a.skipped);
    expect(ran).toHaveLength(1);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.skipReason).toBe('A drill of region eu-test is already running; only one runs at a time.');
    expect(await repo.runningCount(t.app.database.db)).toBe(0);
  }, 240_000);

  it('closes a drill whose instance died as an interrupted error drill, which then refuses runs until resolved', async () => {
    clock.advance(MINUTE);
    const id = randomUUID();
    const stale = new Date(clock.now().getTime() - STALE_RUNNING_MS - 1);
    await repo.insertRunning(t.app.database.db, {
      id,
      region: 'eu-test',
      trigger: 'schedule',
      actor: null,
      startedAt: stale,
      endedAt: null,
      outcome: null,
      errorText: null,
      observedBadge: null,
      badgeSource: 'drill',
      federationLagSec: null,
      unmeasured: [],
      database: 'observatory',
      snapshotId: null,
      snapshotTaken: null,
      snapshotTakenAt: null,
      verificationId: null,
      verificationOutcome: null,
      recoverySec: null,
      dataLossWindowSec: null,
      dataLossTargetSec: TARGET_SEC,
      writeProbe: null,
      writeRoundTripMs: null,
      resolvedDrillIds: [],
      resolvedAt: null,
      resolvedBy: null,
      resolveNote: null,
    });
    const listed = (await t.call({ method: 'GET', url: `${V1}/backups/drills` })).json().drills as Drill[];
    expect(listed.find((d) => d.id === id)).toMatchObject({ outcome: null, endedAt: null, observedBadge: null });

    const refused = await runDrill();
    expect(refused.skipped).toBe(true);
    expect(refused.skipReason).toContain(`Drill ${id} of region eu-test ended in error`);
    const closed = (await t.call({ method: 'GET', url: `${V1}/backups/drills` })).json().drills.find((d: Drill) => d.id === id);
    expect(closed).toMatchObject({ outcome: 'error', observedBadge: 'red', endedAt: clock.now().toISOString() });
    expect(closed.errorText).toMatch(/^interrupted/);
    expect(await drillFacts(id)).toHaveLength(1);
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/${id}/resolve`, payload: { note: 'instance replaced' } })).statusCode).toBe(200);
    expect((await runDrill()).skipped).toBe(false);
  }, 240_000);

  it('runs through POST {v1}/ops/jobs/region-failover-drill/run, scheduled for Monday 04:00 UTC', async () => {
    clock.advance(MINUTE);
    const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/region-failover-drill/run`, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const { run } = res.json();
    expect(run.outcome).toBe('ok');
    expect(run.stats).toMatchObject({ skipped: false, outcome: 'ok', observedBadge: 'green' });
    const drill = (await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { limit: '1' } })).json().drills[0] as Drill;
    expect(drill).toMatchObject({ id: run.stats.drillId, trigger: 'manual', actor: null });
    expect((await drillFacts(drill.id))[0]).toMatchObject({ actor: null, kind: 'region-drill' });
    expect(t.app.scheduler.nextRunAt('region-failover-drill', new Date('2026-11-25T12:00:00Z'))?.toISOString()).toBe('2026-11-30T04:00:00.000Z');
    expect(t.app.scheduler.nextRunAt('region-failover-drill', new Date('2026-11-30T04:00:00Z'))?.toISOString()).toBe('2026-12-07T04:00:00.000Z');
  }, 240_000);
});

describe('drill list and refusals', () => {
  it('lists newest first within `weeks`, up to `limit`', async () => {
    const all = (await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { limit: '500' } })).json();
    expect(all.schema).toBe('svc-region-failover-drill-list.v1');
    const starts = (all.drills as Drill[]).map((d) => d.startedAt);
    expect(starts.length).toBeGreaterThan(8);
    expect([...starts].sort().reverse()).toEqual(starts);
    const two = (await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { limit: '2' } })).json().drills;
    expect(two).toHaveLength(2);
    clock.advance(8 * 24 * HOUR);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { weeks: '1' } })).json().drills).toEqual([]);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, query: { weeks: '2' } })).json().drills.length).toBe(starts.length);
  });

  it('answers 400 for bad input, 404 for unknown drills, 403 without the scope', async () => {
    const bad: Record<string, string>[] = [{ weeks: '0' }, { weeks: '105' }, { limit: '501' }, { limit: 'x' }, { since: '1' }];
    for (const query of bad) {
      expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, query })).statusCode, JSON.stringify(query)).toBe(400);
    }
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/run`, payload: { region: 'x' } })).statusCode).toBe(400);
    const id = randomUUID();
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/${id}/resolve`, payload: {} })).statusCode).toBe(400);
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/${id}/resolve`, payload: { note: '' } })).statusCode).toBe(400);
    const unknown = await t.call({ method: 'POST', url: `${V1}/backups/drills/${id}/resolve`, payload: { note: 'x' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().reason).toBe('not-found');
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/not-a-uuid/resolve`, payload: { note: 'x' } })).statusCode).toBe(404);

    const reader = await t.tokenWith(['read:empire']);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, token: reader })).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/run`, payload: {}, token: reader })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `${V1}/backups/drills/${id}/resolve`, payload: { note: 'x' }, token: reader })).statusCode).toBe(403);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/drills`, token: null })).statusCode).toBe(401);
  });
});

describe('a drill that cannot take the snapshot it needs', () => {
  it('ends error naming why, with nothing restored', async () => {
    // Another instance on the same database whose backup directory cannot be created, and whose
    // target makes every existing snapshot too old: it must take one, and cannot.
    const broken = await t.secondInstance({ OBSERVATORY_BACKUP_DIR: '/dev/null/backups', OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC: '60' });
    clock.advance(MINUTE);
    const res = await broken.server.inject({ method: 'POST', url: `${V1}/backups/drills/run`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const drill = res.json().drill as Drill;
    expect(drill).toMatchObject({ outcome: 'error', observedBadge: 'red', snapshotId: null, snapshotTaken: null, verificationId: null, recoverySec: null });
    expect(drill.errorText).toMatch(/^no snapshot could be taken: /);
    expect(drill.unmeasured).toContain('recoverySec: no restore completed');
    // The live write still worked.
    expect(drill.writeRoundTripMs).toBeGreaterThanOrEqual(0);
    // And it blocks the next run on every instance of the region.
    expect((await runDrill()).skipReason).toContain(`Drill ${drill.id} of region eu-test ended in error`);
  }, 120_000);
});
