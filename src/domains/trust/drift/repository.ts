import { and, count, desc, eq, gte, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { trustDriftEvents as d } from '../schema.ts';
import { HELD_STATUSES } from './kinds.ts';

/** The only SQL of the drift inbox (table in ../schema.ts, migration 0025). */

export type DriftRow = typeof d.$inferSelect;
export type NewDriftRow = Omit<DriftRow, 'seq'>;

/**
 * Inserts an open event unless its (kind, source, source_id) slot is held by an open one (the
 * partial unique index): concurrent scans cannot open it twice. Returns the row when inserted.
 */
export async function insertOpenIfAbsent(tx: Db, row: NewDriftRow): Promise<DriftRow | null> {
  const [inserted] = await tx.insert(d).values(row).onConflictDoNothing().returning();
  return inserted ?? null;
}

/** Open and acknowledged events (of `kinds` when given), oldest first; at most `limit`. */
export async function heldEvents(db: Db, limit: number, kinds?: readonly string[]): Promise<DriftRow[]> {
  return db
    .select()
    .from(d)
    .where(and(inArray(d.status, [...HELD_STATUSES]), kinds === undefined ? undefined : inArray(d.kind, [...kinds])))
    .orderBy(d.seq)
    .limit(limit);
}

export async function listEvents(db: Db, filter: { status: string | null; kind: string | null; since: Date | null; limit: number }): Promise<DriftRow[]> {
  const where: (SQL | undefined)[] = [
    filter.status === null ? undefined : eq(d.status, filter.status),
    filter.kind === null ? undefined : eq(d.kind, filter.kind),
    filter.since === null ? undefined : gte(d.openedAt, filter.since),
  ];
  return db.select().from(d).where(and(...where)).orderBy(desc(d.seq)).limit(filter.limit);
}

export async function lockEvent(tx: Db, id: string): Promise<DriftRow | null> {
  const [row] = await tx.select().from(d).where(eq(d.id, id)).for('update');
  return row ?? null;
}

export async function updateEvent(tx: Db, id: string, patch: Partial<Pick<DriftRow, 'status' | 'acknowledgedAt' | 'resolvedAt' | 'resolvedBy' | 'resolutionNotes'>>): Promise<DriftRow> {
  const [row] = await tx.update(d).set(patch).where(eq(d.id, id)).returning();
  return row!;
}

/** Open and acknowledged events counted by status and severity (status_seq index; a handful of groups). */
export async function heldCounts(db: Db): Promise<{ status: string; severity: string; n: number }[]> {
  return db
    .select({ status: d.status, severity: d.severity, n: count() })
    .from(d)
    .where(inArray(d.status, [...HELD_STATUSES]))
    .groupBy(d.status, d.severity);
}

/** Open and acknowledged events of one severity, oldest first, at most `limit`. */
export async function heldOfSeverity(db: Db, severity: string, limit: number): Promise<DriftRow[]> {
  return db
    .select()
    .from(d)
    .where(and(inArray(d.status, [...HELD_STATUSES]), eq(d.severity, severity)))
    .orderBy(d.seq)
    .limit(limit);
}

/** Events opened at or after `since` (opened_idx), whatever their status now. */
export async function countOpenedSince(db: Db, since: Date): Promise<number> {
  const [row] = await db.select({ n: count() }).from(d).where(gte(d.openedAt, since));
  return row?.n ?? 0;
}

/**
 * Serialises the write step of drift scans across connections and instances. With it, a scan that
 * re-reads the held slots under the lock never inserts into a slot another transaction is
 * changing, so its inserts wait on nobody (no deadlock with an ack holding the chain head).
 */
export async function lockScan(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('trust-drift-scan'))`);
}

/** The held (open or acknowledged) events whose sourceId is one of `sourceIds`: the caller matches kind and source. */
export async function heldAmong(db: Db, sourceIds: readonly string[]): Promise<Pick<DriftRow, 'kind' | 'source' | 'sourceId'>[]> {
  if (sourceIds.length === 0) return [];
  return db
    .select({ kind: d.kind, source: d.source, sourceId: d.sourceId })
    .from(d)
    .where(and(inArray(d.status, [...HELD_STATUSES]), inArray(d.sourceId, [...new Set(sourceIds)])));
}

/**
 * The slots among `sourceIds` whose latest event is `wont-fix` and has not been seen clear since
 * (slot_seq index): an accepted divergence that persists opens nothing.
 */
export async function acceptedAmong(db: Db, sourceIds: readonly string[]): Promise<Pick<DriftRow, 'kind' | 'source' | 'sourceId'>[]> {
  if (sourceIds.length === 0) return [];
  const latest = await db
    .selectDistinctOn([d.kind, d.source, d.sourceId], { kind: d.kind, source: d.source, sourceId: d.sourceId, status: d.status, clearedAt: d.clearedAt })
    .from(d)
    .where(inArray(d.sourceId, [...new Set(sourceIds)]))
    .orderBy(d.kind, d.source, d.sourceId, desc(d.seq));
  return latest.filter((r) => r.status === 'wont-fix' && r.clearedAt === null).map(({ kind, source, sourceId }) => ({ kind, source, sourceId }));
}

/** `wont-fix` events that are still the latest of their slot and not seen clear, oldest first; at most `limit`. */
export async function unclearedWontFix(db: Db, limit: number): Promise<DriftRow[]> {
  return db
    .select()
    .from(d)
    .where(
      and(
        eq(d.status, 'wont-fix'),
        isNull(d.clearedAt),
        sql`NOT EXISTS (SELECT 1 FROM ${d} AS later WHERE later.kind = ${d.kind} AND later.source = ${d.source} AND later.source_id = ${d.sourceId} AND later.seq > ${d.seq})`,
      ),
    )
    .orderBy(d.seq)
    .limit(limit);
}

export async function markCleared(tx: Db, id: string, at: Date): Promise<void> {
  await tx.update(d).set({ clearedAt: at }).where(and(eq(d.id, id), isNull(d.clearedAt)));
}
