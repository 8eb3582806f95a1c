import { sql } from 'drizzle-orm';
import { bigserial, boolean, doublePrecision, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A registered chaos experiment (spec A "Chaos experiment"; docs/chaos/README.md). */
export const chaosExperiments = pgTable(
  'chaos_experiments',
  {
    id: uuid('id').primaryKey(),
    /** Insertion order, so newest-first paging never depends on clock ties. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    slug: text('slug').notNull(),
    /** One of the five kinds (kinds.ts). */
    kind: text('kind').notNull(),
    target: text('target').notNull(),
    description: text('description').notNull().default(''),
    /** The kind's category (`http`, `scheduler`, `flags`, `database`, `bridge`): what OBSERVATORY_CHAOS_ALLOW lists. */
    blastRadius: text('blast_radius').notNull(),
    recoverySloSec: integer('recovery_slo_sec').notNull(),
    cooldownMinutes: integer('cooldown_minutes').notNull(),
    /** `major` or `minor`. */
    severity: text('severity').notNull(),
    /** `active`, `paused` or `retired`. */
    status: text('status').notNull(),
    ownerUserId: text('owner_user_id'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('chaos_experiments_slug_idx').on(t.slug),
    index('chaos_experiments_created_idx').on(t.createdAt, t.seq),
  ],
);

/**
 * One run of an experiment. The injection's state lives here with its expiry, so a crash or
 * restart leaves nothing behind: effects are held by the instance named in `instance_id`, which
 * renews `heartbeat_at` while it runs; a run whose heartbeat or expiry has lapsed is closed as
 * `partial` by whichever instance looks next (start-up first). At most one run is open fleet-wide.
 */
export const chaosRuns = pgTable(
  'chaos_runs',
  {
    id: uuid('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    experimentId: uuid('experiment_id').notNull(),
    /** Copied at start: the run reports what it did even if the experiment changes later. */
    kind: text('kind').notNull(),
    target: text('target').notNull(),
    recoverySloSec: integer('recovery_slo_sec').notNull(),
    /** `schedule` (the chaos-schedule job) or `manual`. */
    trigger: text('trigger').notNull(),
    /** `injected` (the window is open), `recovering` (undone, waiting for the probe), `ended`. */
    phase: text('phase').notNull(),
    startedAt: ts('started_at').notNull(),
    windowEndsAt: ts('window_ends_at').notNull(),
    /** When the window actually closed (undo done); recovery is measured from here. */
    undoneAt: ts('undone_at'),
    /** Past this the run is closed as `partial` by anyone: the window plus the recovery bound. */
    expiresAt: ts('expires_at').notNull(),
    heartbeatAt: ts('heartbeat_at').notNull(),
    instanceId: text('instance_id').notNull(),
    endedAt: ts('ended_at'),
    /** `ok`, `sla-breach`, `aborted` or `partial` (`partial` with endedAt null while in progress). */
    outcome: text('outcome').notNull(),
    observedRecoverySec: doublePrecision('observed_recovery_sec'),
    errorText: text('error_text'),
    abortReason: text('abort_reason'),
    /** What the run measured: the kind's own figures (latency seen, the skipped job run, peers that answered). */
    measurements: jsonb('measurements').notNull(),
  },
  (t) => [
    // One open run at a time, fleet-wide: the second start loses this insert.
    uniqueIndex('chaos_runs_one_open_idx').on(sql`(${t.endedAt} IS NULL)`).where(sql`${t.endedAt} IS NULL`),
    index('chaos_runs_started_idx').on(t.startedAt, t.seq),
    index('chaos_runs_experiment_idx').on(t.experimentId, t.startedAt),
  ],
);

/** The freeze switch (spec A "Freeze switch"): one row per scope; `global` is the only scope. */
export const chaosFreeze = pgTable('chaos_freeze', {
  scope: text('scope').primaryKey(),
  frozen: boolean('frozen').notNull(),
  reason: text('reason').notNull().default(''),
  updatedBy: text('updated_by'),
  updatedAt: ts('updated_at').notNull(),
});
