import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** Every job run, scheduled or on demand, with its outcome, duration, stats and error text. */
export const jobRuns = pgTable(
  'job_runs',
  {
    id: uuid('id').primaryKey(),
    job: text('job').notNull(),
    trigger: text('trigger').notNull(),
    /** The cron fire time a scheduled run stands for; null for on-demand runs. */
    scheduledFor: timestamp('scheduled_for', { withTimezone: true, mode: 'date' }),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    durationMs: integer('duration_ms'),
    outcome: text('outcome').notNull(),
    stats: jsonb('stats').notNull(),
    errorText: text('error_text'),
    instanceId: text('instance_id').notNull(),
  },
  (t) => [
    // The claim: of all instances, only the one whose insert wins runs a given fire time.
    // On-demand runs have a null scheduledFor and never collide (NULLs are distinct).
    uniqueIndex('job_runs_scheduled_once').on(t.job, t.scheduledFor),
    index('job_runs_started_idx').on(t.startedAt),
  ],
);
