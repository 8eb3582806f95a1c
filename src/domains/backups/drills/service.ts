import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, conflict, notFound } from '../../../platform/errors.ts';
import type { VerificationTrigger } from '../service.ts';
import * as repo from './repository.ts';

/**
 * Region failover drills (spec A, B group 5, C Limits; docs/backups/README.md, "Failover drills"): a real
 * rehearsal of losing this deployment's region. One orchestrator serves the weekly job and
 * `drills/run`: it refuses while an unresolved error drill of the region from the last 24 hours
 * exists, restores the newest snapshot of the service's database into a scratch copy, measures the
 * recovery time and the data-loss window, checks a write round trip on the live database, and
 * records the drill as an audit fact (source `RegionFailoverDrill`, kind `region-drill`).
 */

/** A manual run is refused while an unresolved error drill of the region ended within this window. */
export const REFUSAL_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A drill still `running` this long after it started was interrupted (its instance died); it is closed as an error. */
export const STALE_RUNNING_MS = 6 * 60 * 60 * 1000;
export const LIST_WEEKS_DEFAULT = 12;
export const LIST_WEEKS_MAX = 104;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 500;
/** Why federationLagSec is null: the drill does not ask the other regions (docs/backups/README.md). */
export const FEDERATION_UNMEASURED = 'federationLagSec: the drill rehearses the restore of this deployment only and does not ask the other regions, so no lag was measured';

export type DrillOutcome = 'ok' | 'drift' | 'error';
export type Badge = 'green' | 'yellow' | 'red';

/** A snapshot as the drill needs it. */
export interface RehearsalSnapshot {
  id: string;
  takenAt: Date;
}

/** A restore verification as the drill needs it: the snapshot restored into a scratch database. */
export interface RehearsalVerification {
  id: string;
  outcome: DrillOutcome;
  durationMs: number;
  errorText: string | null;
}

/**
 * What the drill asks of the backups domain. `verifySnapshot` must really restore the snapshot
 * (not compare it with itself) and record the verification; failures it can describe come back as
 * outcome `error`, anything it throws is an error too.
 */
export interface RestoreRehearsal {
  /** The name of the service's own database, as its snapshots record it. */
  database: string;
  latestSnapshot(database: string): Promise<RehearsalSnapshot | null>;
  takeSnapshot(): Promise<RehearsalSnapshot>;
  /**
   * `call`: the operator (or bridge peer) who asked, for the verification's audit row; null for
   * the drill. `trigger` as the verification records it (`job` for the drill by default).
   */
  verifySnapshot(snapshotId: string, call: CallContext | null, trigger?: VerificationTrigger): Promise<RehearsalVerification>;
  /** Runs `work` holding the deployment's backup turn (one snapshot or verification at a time). */
  exclusive<T>(work: () => Promise<T>, options: { wait: boolean }): Promise<T>;
  /** When the newest verification with this trigger was stored, or null. */
  lastVerifiedAt(trigger: VerificationTrigger): Promise<Date | null>;
}

export interface DrillView {
  id: string;
  region: string;
  trigger: 'schedule' | 'manual';
  actor: string | null;
  startedAt: string;
  endedAt: string | null;
  outcome: DrillOutcome | null;
  errorText: string | null;
  observedBadge: Badge | null;
  badgeSource: 'drill';
  federationLagSec: number | null;
  unmeasured: string[];
  database: string | null;
  snapshotId: string | null;
  snapshotTaken: boolean | null;
  snapshotTakenAt: string | null;
  verificationId: string | null;
  verificationOutcome: DrillOutcome | null;
  recoverySec: number | null;
  dataLossWindowSec: number | null;
  dataLossTargetSec: number | null;
  writeRoundTripMs: number | null;
  resolvedDrillIds: string[];
  resolvedAt: string | null;
  resolvedBy: string | null;
  resolveNote: string | null;
}

export interface DrillRunResult {
  skipped: boolean;
  skipReason: string | null;
  drill: DrillView | null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function toDrillView(row: repo.DrillRow): DrillView {
  return {
    id: row.id,
    region: row.region,
    trigger: row.trigger === 'schedule' ? 'schedule' : 'manual',
    actor: row.actor,
    startedAt: row.startedAt.toISOString(),
    endedAt: iso(row.endedAt),
    outcome: row.outcome as DrillOutcome | null,
    errorText: row.errorText,
    observedBadge: row.observedBadge as Badge | null,
    badgeSource: 'drill',
    federationLagSec: row.federationLagSec,
    unmeasured: row.unmeasured,
    database: row.database,
    snapshotId: row.snapshotId,
    snapshotTaken: row.snapshotTaken,
    snapshotTakenAt: iso(row.snapshotTakenAt),
    verificationId: row.verificationId,
    verificationOutcome: row.verificationOutcome as DrillOutcome | null,
    recoverySec: row.recoverySec,
    dataLossWindowSec: row.dataLossWindowSec,
    dataLossTargetSec: row.dataLossTargetSec,
    writeRoundTripMs: row.writeRoundTripMs,
    resolvedDrillIds: row.resolvedDrillIds,
    resolvedAt: iso(row.resolvedAt),
    resolvedBy: row.resolvedBy,
    resolveNote: row.resolveNote,
  };
}

/** The drill's own badge from its outcome (docs/backups/README.md: until a trust snapshot exists). */
export function badgeOf(outcome: DrillOutcome): Badge {
  return outcome === 'ok' ? 'green' : outcome === 'drift' ? 'yellow' : 'red';
}

/** What a drill measured, before it is classified. */
export interface DrillMeasurements {
  /** Errors that make the drill `error`: no snapshot could be taken, the restore failed, the live write failed. */
  errors: string[];
  verificationOutcome: DrillOutcome | null;
  verificationErrorText: string | null;
  /** null when no snapshot existed when the drill started. */
  dataLossWindowSec: number | null;
  dataLossTargetSec: number;
}

/**
 * The rule: `error` when any step failed; `drift` when the restore found drift, the data-loss window
 * exceeded its target, or there was no snapshot at all to lose data against; `ok` otherwise. The
 * errorText names every reason.
 */
export function classifyDrill(m: DrillMeasurements): { outcome: DrillOutcome; errorText: string | null } {
  if (m.errors.length > 0) return { outcome: 'error', errorText: m.errors.join('; ') };
  const drift: string[] = [];
  if (m.verificationOutcome === 'drift') drift.push(`restore drift: ${m.verificationErrorText ?? 'the restored copy differs from the snapshot record'}`);
  if (m.dataLossWindowSec === null) drift.push('no snapshot existed when the drill started: every write so far would have been lost');
  else if (m.dataLossWindowSec > m.dataLossTargetSec) {
    drift.push(`data-loss window ${Math.round(m.dataLossWindowSec)} s exceeds the target of ${m.dataLossTargetSec} s`);
  }
  return drift.length > 0 ? { outcome: 'drift', errorText: drift.join('; ') } : { outcome: 'ok', errorText: null };
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export interface DrillService {
  /** The one orchestrator: the weekly job and `drills/run`. A refusal is a result, never an error. */
  run(request: { trigger: 'schedule' | 'manual'; ctx: CallContext | null }): Promise<DrillRunResult>;
  list(query: { weeks?: number | undefined; limit?: number | undefined }): Promise<{ drills: DrillView[] }>;
  /** The newest finished drill and the newest that ended ok (the compliance predicate failover-drill-90d). */
  latestFinished(): Promise<{ latest: repo.DrillRow | null; lastOk: repo.DrillRow | null }>;
  resolve(ctx: CallContext, id: string, note: string): Promise<{ ok: true; drill: DrillView }>;
}

export function createDrillService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  rehearsal: RestoreRehearsal;
  /** OBSERVATORY_REGION. */
  region: string;
  /** OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC. */
  dataLossTargetSec: number;
}): DrillService {
  const { db, clock, audit, rehearsal, region, dataLossTargetSec } = deps;

  const appendDrillFact = (tx: Db, row: repo.DrillRow) =>
    audit.appendFact(tx, { source: 'RegionFailoverDrill', sourceId: row.id, kind: 'region-drill', actor: row.actor, payload: toDrillView(row) });

  /**
   * Claims the region's single running slot and applies the refusal rule, in one transaction: the
   * running row is inserted first and the error check follows, so a drill finishing in error on
   * another connection meanwhile is seen (read committed) and two starts never both run.
   */
  async function start(trigger: 'schedule' | 'manual', ctx: CallContext | null): Promise<{ row: repo.DrillRow } | { skipReason: string }> {
    return withTransaction(db, async (tx) => {
      const now = clock.now();
      const stale = await repo.closeStaleRunning(
        tx,
        region,
        new Date(now.getTime() - STALE_RUNNING_MS),
        now,
        `interrupted: still running ${STALE_RUNNING_MS / 3_600_000} h after it started (the instance running it stopped)`,
      );
      for (const row of stale) await appendDrillFact(tx, row);
      const row: repo.DrillRow = {
        id: randomUUID(),
        region,
        trigger,
        actor: ctx?.principal.username ?? null,
        startedAt: now,
        endedAt: null,
        outcome: null,
        errorText: null,
        observedBadge: null,
        badgeSource: 'drill',
        federationLagSec: null,
        unmeasured: [],
        database: rehearsal.database,
        snapshotId: null,
        snapshotTaken: null,
        snapshotTakenAt: null,
        verificationId: null,
        verificationOutcome: null,
        recoverySec: null,
        dataLossWindowSec: null,
        dataLossTargetSec,
        writeProbe: null,
        writeRoundTripMs: null,
        resolvedDrillIds: [],
        resolvedAt: null,
        resolvedBy: null,
        resolveNote: null,
      };
      let skipReason: string | null = null;
      if (!(await repo.insertRunning(tx, row))) {
        skipReason = `A drill of region ${region} is already running; only one runs at a time.`;
      } else {
        const blocking = await repo.unresolvedErrorSince(tx, region, new Date(now.getTime() - REFUSAL_WINDOW_MS));
        if (blocking !== null) {
          await repo.deleteDrill(tx, row.id);
          skipReason =
            `Drill ${blocking.id} of region ${region} ended in error at ${blocking.endedAt!.toISOString()} and is unresolved: ` +
            'resolve it (POST …/backups/drills/{id}/resolve) or wait until 24 hours have passed since it ended.';
        }
      }
      if (skipReason !== null) {
        if (ctx !== null) {
          await audit.record(tx, {
            verb: 'backup.drill-run',
            target: `region:${region}`,
            surface: 'api',
            actor: actorOf(ctx.principal),
            after: { skipped: true, skipReason },
            requestId: ctx.requestId,
          });
        }
        return { skipReason };
      }
      return { row };
    });
  }

  /** The newest snapshot, the one restored (taken first when needed) and the restore; failures go to `errors`. */
  async function rehearse(row: repo.DrillRow, errors: string[]) {
    let newest: RehearsalSnapshot | null = null;
    let restored: RehearsalSnapshot | null = null;
    let snapshotTaken = false;
    let verification: RehearsalVerification | null = null;
    try {
      newest = await rehearsal.latestSnapshot(rehearsal.database);
      restored = newest;
      const ageSec = newest === null ? null : (row.startedAt.getTime() - newest.takenAt.getTime()) / 1000;
      // No snapshot, or one older than the target: take a fresh one, so the restore rehearses a current copy.
      if (ageSec === null || ageSec > dataLossTargetSec) {
        try {
          restored = await rehearsal.takeSnapshot();
          snapshotTaken = true;
        } catch (error) {
          restored = null;
          errors.push(`no snapshot could be taken: ${describe(error)}`);
        }
      }
    } catch (error) {
      errors.push(`the newest snapshot could not be read: ${describe(error)}`);
    }
    if (restored !== null) {
      try {
        verification = await rehearsal.verifySnapshot(restored.id, null);
        if (verification.outcome === 'error') errors.push(`restore of snapshot ${restored.id} failed: ${verification.errorText ?? 'no reason given'}`);
      } catch (error) {
        errors.push(`restore of snapshot ${restored.id} failed: ${describe(error)}`);
      }
    }
    return { newest, restored, snapshotTaken, verification };
  }

  /** Restores, measures and checks; never throws (every failure is a measurement). */
  async function measure(row: repo.DrillRow): Promise<repo.DrillFinish> {
    const errors: string[] = [];
    const unmeasured = [FEDERATION_UNMEASURED];
    // The snapshot and its restore hold the deployment's backup turn: the drill waits for a
    // snapshot or verification in progress rather than failing against it.
    let rehearsed: Awaited<ReturnType<typeof rehearse>> = { newest: null, restored: null, snapshotTaken: false, verification: null };
    try {
      rehearsed = await rehearsal.exclusive(() => rehearse(row, errors), { wait: true });
    } catch (error) {
      errors.push(`no restore could start: ${describe(error)}`);
    }
    const { newest, restored, snapshotTaken, verification } = rehearsed;
    const dataLossWindowSec = newest === null ? null : Math.max(0, (row.startedAt.getTime() - newest.takenAt.getTime()) / 1000);
    if (dataLossWindowSec === null) unmeasured.push('dataLossWindowSec: no snapshot existed when the drill started');
    if (verification === null || verification.outcome === 'error') unmeasured.push('recoverySec: no restore completed');

    let writeRoundTripMs: number | null = null;
    try {
      const probe = randomUUID();
      const began = performance.now();
      const readBack = await repo.writeProbe(db, row.id, probe);
      writeRoundTripMs = Math.round((performance.now() - began) * 1000) / 1000;
      if (readBack !== probe) errors.push('the live database did not return the value just written');
    } catch (error) {
      errors.push(`the live database refused a write: ${describe(error)}`);
    }
    if (writeRoundTripMs === null) unmeasured.push('writeRoundTripMs: the live write did not complete');

    const { outcome, errorText } = classifyDrill({
      errors,
      verificationOutcome: verification?.outcome ?? null,
      verificationErrorText: verification?.errorText ?? null,
      dataLossWindowSec,
      dataLossTargetSec,
    });
    const restoredOk = verification !== null && verification.outcome !== 'error';
    return {
      endedAt: clock.now(),
      outcome,
      errorText,
      observedBadge: badgeOf(outcome),
      unmeasured,
      database: rehearsal.database,
      snapshotId: restored?.id ?? null,
      snapshotTaken: restored === null ? null : snapshotTaken,
      snapshotTakenAt: restored?.takenAt ?? null,
      verificationId: verification?.id ?? null,
      verificationOutcome: verification?.outcome ?? null,
      recoverySec: restoredOk ? verification!.durationMs / 1000 : null,
      dataLossWindowSec,
      dataLossTargetSec,
      writeRoundTripMs,
      resolvedDrillIds: [],
    };
  }

  async function finish(row: repo.DrillRow, fields: repo.DrillFinish, ctx: CallContext | null): Promise<repo.DrillRow> {
    return withTransaction(db, async (tx) => {
      let finished = await repo.finishDrill(tx, row.id, fields);
      if (fields.outcome === 'ok') {
        const resolved = await repo.resolveEarlierErrors(tx, region, row.startedAt, fields.endedAt!, `drill:${row.id}`);
        if (resolved.length > 0) finished = await repo.finishDrill(tx, row.id, { ...fields, resolvedDrillIds: resolved });
      }
      await appendDrillFact(tx, finished);
      if (ctx !== null) {
        await audit.record(tx, {
          verb: 'backup.drill-run',
          target: `drill:${row.id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          after: toDrillView(finished),
          requestId: ctx.requestId,
        });
      }
      return finished;
    });
  }

  return {
    async run({ trigger, ctx }) {
      const started = await start(trigger, ctx);
      if ('skipReason' in started) return { skipped: true, skipReason: started.skipReason, drill: null };
      const fields = await measure(started.row);
      const finished = await finish(started.row, fields, ctx);
      return { skipped: false, skipReason: null, drill: toDrillView(finished) };
    },

    latestFinished: () => repo.latestFinishedDrills(db),
    async list({ weeks = LIST_WEEKS_DEFAULT, limit = LIST_LIMIT_DEFAULT }) {
      const since = new Date(clock.now().getTime() - weeks * 7 * 24 * 60 * 60 * 1000);
      const rows = await repo.listDrills(db, since, limit);
      return { drills: rows.map(toDrillView) };
    },

    async resolve(ctx, id, note) {
      assertThat(isUuid(id), notFound(`There is no drill ${id}.`));
      const row = await withTransaction(db, async (tx) => {
        const before = await repo.lockDrill(tx, id);
        assertThat(before, notFound(`There is no drill ${id}.`));
        if (before.outcome !== 'error') {
          throw conflict(`Drill ${id} ${before.outcome === null ? 'is still running' : `ended ${before.outcome}`}; only error drills are resolved.`);
        }
        if (before.resolvedAt !== null) {
          throw conflict(`Drill ${id} was already resolved at ${before.resolvedAt.toISOString()} by ${before.resolvedBy ?? 'someone'}.`);
        }
        const after = await repo.markResolved(tx, id, clock.now(), ctx.principal.username, note);
        await audit.record(tx, {
          verb: 'backup.drill-resolve',
          target: `drill:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toDrillView(before),
          after: toDrillView(after),
          requestId: ctx.requestId,
        });
        return after;
      });
      return { ok: true, drill: toDrillView(row) };
    },
  };
}
