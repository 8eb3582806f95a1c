import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One region failover drill (spec A, "Region failover drill"): a rehearsal of losing this
 * deployment's region, with what it measured. A row is inserted `running` (ended_at null) when the
 * drill starts and finished in place; at most one drill per region runs at a time (the partial
 * unique index), which is how two concurrent starts are told apart on every instance.
 * docs/backups/README.md, "Failover drills".
 */
export const regionFailoverDrills = pgTable(
  'region_failover_drills',
  {
    id: uuid('id').primaryKey(),
    region: text('region').notNull(),
    /** `schedule` (the weekly job) or `manual` (drills/run, or the job run on demand). */
    trigger: text('trigger').notNull(),
    /** Who asked for a manual drill; null for the weekly job. */
    actor: text('actor'),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    /** `ok`, `drift` or `error`; null while running. */
    outcome: text('outcome'),
    errorText: text('error_text'),
    /** `green`, `yellow` or `red`; null while running. */
    observedBadge: text('observed_badge'),
    /** Where observedBadge comes from: `drill` (its own measurements) until a trust snapshot exists. */
    badgeSource: text('badge_source').notNull(),
    /** Null while the drill does not ask the other regions; `unmeasured` says why. */
    federationLagSec: doublePrecision('federation_lag_sec'),
    /** `field: reason` for each measurement the drill could not take. */
    unmeasured: jsonb('unmeasured').$type<string[]>().notNull(),
    database: text('database'),
    snapshotId: text('snapshot_id'),
    /** True when the drill took the snapshot it restored (none was recent enough). */
    snapshotTaken: boolean('snapshot_taken'),
    snapshotTakenAt: ts('snapshot_taken_at'),
    verificationId: text('verification_id'),
    verificationOutcome: text('verification_outcome'),
    recoverySec: doublePrecision('recovery_sec'),
    dataLossWindowSec: doublePrecision('data_loss_window_sec'),
    dataLossTargetSec: doublePrecision('data_loss_target_sec'),
    /** The live database write check: the random value written, then read back. */
    writeProbe: text('write_probe'),
    writeRoundTripMs: doublePrecision('write_round_trip_ms'),
    /** Error drills of the region this (ok) drill resolved. */
    resolvedDrillIds: jsonb('resolved_drill_ids').$type<string[]>().notNull(),
    /** For an error drill: when and how it was resolved (a later ok drill, or an operator). */
    resolvedAt: ts('resolved_at'),
    resolvedBy: text('resolved_by'),
    resolveNote: text('resolve_note'),
  },
  (t) => [
    uniqueIndex('region_failover_drills_one_running').on(t.region).where(sql`${t.endedAt} IS NULL`),
    index('region_failover_drills_started_idx').on(t.startedAt, t.id),
    index('region_failover_drills_region_started_idx').on(t.region, t.startedAt),
  ],
);
