import { and, desc, eq, gte, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { regionFailoverDrills as d } from './schema.ts';

/** The only SQL of the failover drills. */

export type DrillRow = typeof d.$inferSelect;
export type DrillFinish = Pick<
  DrillRow,
  | 'endedAt'
  | 'outcome'
  | 'errorText'
  | 'observedBadge'
  | 'unmeasured'
  | 'database'
  | 'snapshotId'
  | 'snapshotTaken'
  | 'snapshotTakenAt'
  | 'verificationId'
  | 'verificationOutcome'
  | 'recoverySec'
  | 'dataLossWindowSec'
  | 'dataLossTargetSec'
  | 'writeRoundTripMs'
  | 'resolvedDrillIds'
>;

/** Inserts a running drill; false when one is already running for the region (the partial unique index). */
export async function insertRunning(tx: Db, row: DrillRow): Promise<boolean> {
  const inserted = await tx.insert(d).values(row).onConflictDoNothing().returning({ id: d.id });
  return inserted.length === 1;
}

export async function deleteDrill(tx: Db, id: string): Promise<void> {
  await tx.delete(d).where(eq(d.id, id));
}

/** Drills of the region still `running` that started before `before`: an instance died under them. */
export async function closeStaleRunning(tx: Db, region: string, before: Date, at: Date, errorText: string): Promise<DrillRow[]> {
  return tx
    .update(d)
    .set({ endedAt: at, outcome: 'error', errorText, observedBadge: 'red' })
    .where(and(eq(d.region, region), isNull(d.endedAt), lt(d.startedAt, before)))
    .returning();
}

/** The newest unresolved error drill of the region that ended at or after `since`, if any. */
export async function unresolvedErrorSince(db: Db, region: string, since: Date): Promise<DrillRow | null> {
  const [row] = await db
    .select()
    .from(d)
    .where(and(eq(d.region, region), eq(d.outcome, 'error'), isNull(d.resolvedAt), gte(d.endedAt, since)))
    .orderBy(desc(d.endedAt), desc(d.id))
    .limit(1);
  return row ?? null;
}

/** Writes a random value into the drill's own row and reads back what the database stored. */
export async function writeProbe(db: Db, id: string, probe: string): Promise<string | null> {
  const [row] = await db.update(d).set({ writeProbe: probe }).where(eq(d.id, id)).returning({ probe: d.writeProbe });
  return row?.probe ?? null;
}

export async function finishDrill(tx: Db, id: string, fields: DrillFinish): Promise<DrillRow> {
  const [row] = await tx.update(d).set(fields).where(eq(d.id, id)).returning();
  return row!;
}

/** Marks the region's unresolved error drills that started before `before` as resolved by an ok drill. */
export async function resolveEarlierErrors(tx: Db, region: string, before: Date, at: Date, by: string): Promise<string[]> {
  const rows = await tx
    .update(d)
    .set({ resolvedAt: at, resolvedBy: by })
    .where(and(eq(d.region, region), eq(d.outcome, 'error'), isNull(d.resolvedAt), lt(d.startedAt, before)))
    .returning({ id: d.id });
  return rows.map((r) => r.id);
}

export async function lockDrill(tx: Db, id: string): Promise<DrillRow | null> {
  const [row] = await tx.select().from(d).where(eq(d.id, id)).for('update');
  return row ?? null;
}

export async function markResolved(tx: Db, id: string, at: Date, by: string, note: string): Promise<DrillRow> {
  const [row] = await tx.update(d).set({ resolvedAt: at, resolvedBy: by, resolveNote: note }).where(eq(d.id, id)).returning();
  return row!;
}

export async function drillById(db: Db, id: string): Promise<DrillRow | null> {
  const [row] = await db.select().from(d).where(eq(d.id, id));
  return row ?? null;
}

/** Drills that started at or after `since`, newest first. */
export async function listDrills(db: Db, since: Date, limit: number): Promise<DrillRow[]> {
  return db.select().from(d).where(gte(d.startedAt, since)).orderBy(desc(d.startedAt), desc(d.id)).limit(limit);
}

/** For tests and the docs: rows still running (ended_at null). */
export async function runningCount(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(d).where(isNull(d.endedAt));
  return row?.n ?? 0;
}

/** The newest finished drill, and the newest that ended `ok` (either may be null). */
export async function latestFinishedDrills(db: Db): Promise<{ latest: DrillRow | null; lastOk: DrillRow | null }> {
  const newest = (outcome: string | null) =>
    db
      .select()
      .from(d)
      .where(outcome === null ? sql`${d.outcome} IS NOT NULL` : eq(d.outcome, outcome))
      .orderBy(desc(d.startedAt), desc(d.id))
      .limit(1);
  const [latest] = await newest(null);
  const [lastOk] = await newest('ok');
  return { latest: latest ?? null, lastOk: lastOk ?? null };
}
