import { and, desc, eq, gt, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../../platform/db/paging.ts';
// The runner's own bookkeeping is written even while it holds this instance's sessions read-only
// (the prisma-readonly-window kind): these transactions say READ WRITE for themselves.
import { isUniqueViolation, withWritableTransaction } from '../../../platform/db/transaction.ts';
import { chaosExperiments, chaosRuns } from '../schema.ts';

export type RunRow = typeof chaosRuns.$inferSelect;
export type ExperimentRow = typeof chaosExperiments.$inferSelect;
export type RunWithExperiment = RunRow & { experimentSlug: string | null; experimentKind: string | null };

/** Inserts the run; false when another run is open (the one-open-run index refused it). */
export async function insertRun(db: Db, row: typeof chaosRuns.$inferInsert): Promise<boolean> {
  try {
    await withWritableTransaction(db, (tx) => tx.insert(chaosRuns).values(row));
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export async function openRun(db: Db): Promise<RunRow | null> {
  const [row] = await db.select().from(chaosRuns).where(isNull(chaosRuns.endedAt)).limit(1);
  return row ?? null;
}

/** Writes `patch` to a run that is still open; false when it had already ended (another instance closed it). */
export async function updateOpenRun(db: Db, id: string, patch: Partial<typeof chaosRuns.$inferInsert>): Promise<boolean> {
  const rows = await withWritableTransaction(db, (tx) =>
    tx.update(chaosRuns).set(patch).where(and(eq(chaosRuns.id, id), isNull(chaosRuns.endedAt))).returning({ id: chaosRuns.id }),
  );
  return rows.length > 0;
}

/**
 * Open runs whose expiry passed, or whose holder (another instance than `self`) stopped renewing
 * its heartbeat before `staleBefore`.
 */
export async function lapsedOpenRuns(db: Db, now: Date, staleBefore: Date, self: string): Promise<RunRow[]> {
  return db
    .select()
    .from(chaosRuns)
    .where(
      and(
        isNull(chaosRuns.endedAt),
        or(and(lt(chaosRuns.heartbeatAt, staleBefore), ne(chaosRuns.instanceId, self)), lt(chaosRuns.expiresAt, now)),
      ),
    );
}

/**
 * Takes the pending skip of `job` for one scheduled run: the open cron-skip-one run aimed at it,
 * still in its window and held by a live instance. Returns the run taken, or null; the conditional
 * update makes sure only one scheduled run is ever skipped for it.
 */
export async function takeCronSkip(db: Db, job: string, now: Date, staleBefore: Date, self: string, measurements: (run: RunRow) => unknown): Promise<RunRow | null> {
  return withWritableTransaction(db, async (tx) => {
    const [run] = await tx
      .select()
      .from(chaosRuns)
      .where(
        and(
          isNull(chaosRuns.endedAt),
          eq(chaosRuns.kind, 'cron-skip-one'),
          eq(chaosRuns.target, job),
          eq(chaosRuns.phase, 'injected'),
          or(gt(chaosRuns.heartbeatAt, staleBefore), eq(chaosRuns.instanceId, self)),
          gt(chaosRuns.windowEndsAt, now),
        ),
      )
      .limit(1);
    if (!run) return null;
    const taken = await tx
      .update(chaosRuns)
      .set({ phase: 'recovering', undoneAt: now, measurements: measurements(run) })
      .where(and(eq(chaosRuns.id, run.id), eq(chaosRuns.phase, 'injected'), isNull(chaosRuns.endedAt)))
      .returning({ id: chaosRuns.id });
    return taken.length > 0 ? run : null;
  });
}

function selectRuns(db: Db) {
  return db
    .select({ run: chaosRuns, experimentSlug: chaosExperiments.slug, experimentKind: chaosExperiments.kind })
    .from(chaosRuns)
    .leftJoin(chaosExperiments, eq(chaosExperiments.id, chaosRuns.experimentId))
    .$dynamic();
}

const flatten = (row: { run: RunRow; experimentSlug: string | null; experimentKind: string | null }): RunWithExperiment => ({
  ...row.run,
  experimentSlug: row.experimentSlug,
  experimentKind: row.experimentKind,
});

/** Newest first by (startedAt, id), after `cursor` (platform/db/paging.ts). */
export async function listRuns(
  db: Db,
  filter: { limit: number; cursor: TimeCursor | null; experimentId?: string | undefined; outcome?: string | undefined },
): Promise<RunWithExperiment[]> {
  const conditions = [
    filter.cursor === null ? undefined : olderThan(chaosRuns.startedAt, chaosRuns.id, filter.cursor),
    filter.experimentId === undefined ? undefined : eq(chaosRuns.experimentId, filter.experimentId),
    filter.outcome === undefined ? undefined : eq(chaosRuns.outcome, filter.outcome),
  ].filter((c) => c !== undefined);
  const rows = await selectRuns(db)
    .where(conditions.length > 0 ? and(...conditions) : undefined)
    .orderBy(desc(chaosRuns.startedAt), desc(chaosRuns.id))
    .limit(filter.limit);
  return rows.map(flatten);
}

export async function getRunView(db: Db, id: string): Promise<RunWithExperiment | null> {
  const [row] = await selectRuns(db).where(eq(chaosRuns.id, id)).limit(1);
  return row ? flatten(row) : null;
}

/** Active experiments with the start of their latest run (null when never run), for the schedule's pick. */
export async function activeExperimentsWithLastRun(db: Db): Promise<(ExperimentRow & { lastRunAt: Date | null })[]> {
  const lastRun = db
    .select({ experimentId: chaosRuns.experimentId, lastRunAt: sql<Date>`max(${chaosRuns.startedAt})`.as('last_run_at') })
    .from(chaosRuns)
    .groupBy(chaosRuns.experimentId)
    .as('last_run');
  const rows = await db
    .select({ experiment: chaosExperiments, lastRunAt: lastRun.lastRunAt })
    .from(chaosExperiments)
    .leftJoin(lastRun, eq(lastRun.experimentId, chaosExperiments.id))
    .where(eq(chaosExperiments.status, 'active'))
    .orderBy(chaosExperiments.createdAt, chaosExperiments.seq);
  return rows.map((r) => ({ ...r.experiment, lastRunAt: r.lastRunAt === null ? null : new Date(r.lastRunAt) }));
}

/** A plain write through the ordinary path: the read-only window's probe (refused while it lasts). */
export async function probeWrite(db: Db, id: string, now: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.update(chaosRuns).set({ heartbeatAt: now }).where(eq(chaosRuns.id, id));
  });
}
