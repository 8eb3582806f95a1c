import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import { rowsOf } from '../db/client.ts';
import { jobRuns } from './schema.ts';

export type JobRunRow = typeof jobRuns.$inferSelect;

/** Inserts the run row; for a scheduled run returns false when another instance claimed it first. */
export async function claimRun(db: Db, row: JobRunRow): Promise<boolean> {
  const inserted = await db
    .insert(jobRuns)
    .values(row)
    .onConflictDoNothing({ target: [jobRuns.job, jobRuns.scheduledFor] })
    .returning({ id: jobRuns.id });
  return inserted.length === 1;
}

export async function finishRun(
  db: Db,
  id: string,
  result: Pick<JobRunRow, 'finishedAt' | 'durationMs' | 'outcome' | 'stats' | 'errorText'>,
): Promise<void> {
  await db.update(jobRuns).set(result).where(eq(jobRuns.id, id));
}

export async function listRecentRuns(db: Db, limit: number): Promise<JobRunRow[]> {
  return db.select().from(jobRuns).orderBy(desc(jobRuns.startedAt), desc(jobRuns.id)).limit(limit);
}

export async function latestRunPerJob(db: Db): Promise<JobRunRow[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT ON (job) id, job, trigger, scheduled_for AS "scheduledFor", started_at AS "startedAt",
           finished_at AS "finishedAt", duration_ms AS "durationMs", outcome, stats, error_text AS "errorText",
           instance_id AS "instanceId"
    FROM job_runs ORDER BY job, started_at DESC, id DESC`);
  return rowsOf<JobRunRow>(result).map((r) => ({
    ...r,
    scheduledFor: r.scheduledFor === null ? null : new Date(r.scheduledFor),
    startedAt: new Date(r.startedAt),
    finishedAt: r.finishedAt === null ? null : new Date(r.finishedAt),
  }));
}

export async function hasScheduledRun(db: Db, job: string, scheduledFor: Date): Promise<boolean> {
  const rows = await db
    .select({ id: jobRuns.id })
    .from(jobRuns)
    .where(sql`${jobRuns.job} = ${job} AND ${jobRuns.scheduledFor} = ${scheduledFor}`)
    .limit(1);
  return rows.length > 0;
}

/** The first run of `job` that started after `after` and ended ok (a chaos cron-skip's recovery probe). */
export async function firstOkRunAfter(db: Db, job: string, after: Date): Promise<JobRunRow | null> {
  const [row] = await db
    .select()
    .from(jobRuns)
    .where(sql`${jobRuns.job} = ${job} AND ${jobRuns.startedAt} > ${after} AND ${jobRuns.outcome} = 'ok'`)
    .orderBy(jobRuns.startedAt)
    .limit(1);
  return row ?? null;
}
