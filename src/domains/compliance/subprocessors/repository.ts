import { and, asc, count, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { complianceSubprocessors as t } from '../schema.ts';

/** The only SQL of the subprocessor registry (table in ../schema.ts, migration 0024_compliance). */

export type SubprocessorRow = typeof t.$inferSelect;
export type SubprocessorPatch = Partial<Omit<SubprocessorRow, 'id' | 'createdAt'>>;

/**
 * Serialises upserts across connections until the transaction ends: names compare without regard
 * to case, which the unique index (exact `name`) cannot enforce, and the registry's row cap is a
 * count followed by an insert. Upserts are rare operator calls, so one lock for all costs nothing.
 */
export async function lockUpserts(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('compliance-subprocessors:upsert'))`);
}

/**
 * Locks the row whose name equals `name` ignoring case, for a change; the exact spelling first if
 * several differ only in case (rows written before names compared so, or by hand). Null when none.
 * A scan of a table the cap keeps at a few thousand rows at most.
 */
export async function lockByName(tx: Db, name: string): Promise<SubprocessorRow | null> {
  const [row] = await tx
    .select()
    .from(t)
    .where(sql`lower(${t.name}) = lower(${name})`)
    .orderBy(sql`${t.name} = ${name} DESC`, asc(t.createdAt), asc(t.id))
    .limit(1)
    .for('update');
  return row ?? null;
}

/** Locks one row for a change (review, archive): concurrent calls on it run one after the other. */
export async function lockById(tx: Db, id: string): Promise<SubprocessorRow | null> {
  const [row] = await tx.select().from(t).where(eq(t.id, id)).for('update');
  return row ?? null;
}

/**
 * Inserts a row unless its exact name exists (`ON CONFLICT (name) DO NOTHING` on the unique index);
 * true when this call inserted it. A concurrent insert of the same name waits here for the other
 * to commit and then inserts nothing, rather than failing with a unique violation.
 */
export async function insertIfAbsent(tx: Db, row: SubprocessorRow): Promise<boolean> {
  const inserted = await tx.insert(t).values(row).onConflictDoNothing({ target: t.name }).returning({ id: t.id });
  return inserted.length > 0;
}

export async function update(tx: Db, id: string, patch: SubprocessorPatch): Promise<void> {
  await tx.update(t).set(patch).where(eq(t.id, id));
}

/** Every row, archived ones included. */
export async function countAll(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(t);
  return Number(row?.n ?? 0);
}

/** Rows by name (ignoring case, then exactly, then id), archived ones only when asked; at most `limit`. */
export async function list(db: Db, filter: { includeArchived: boolean; limit: number }): Promise<SubprocessorRow[]> {
  return db
    .select()
    .from(t)
    .where(filter.includeArchived ? undefined : isNull(t.archivedAt))
    .orderBy(sql`lower(${t.name})`, asc(t.name), asc(t.id))
    .limit(filter.limit);
}

/** In use (not archived) and not reviewed since `cutoff`: never reviewed, or last reviewed before it. */
const unreviewedSince = (cutoff: Date) => and(isNull(t.archivedAt), or(isNull(t.lastReviewedAt), lt(t.lastReviewedAt, cutoff)));

/** Counted in SQL: rows in use, and those of them not reviewed since `cutoff`. */
export async function countReviewState(db: Db, cutoff: Date): Promise<{ inUse: number; unreviewed: number }> {
  const [row] = await db
    .select({
      inUse: count(),
      unreviewed: sql<number>`count(*) FILTER (WHERE ${unreviewedSince(cutoff)})`.mapWith(Number),
    })
    .from(t)
    .where(isNull(t.archivedAt));
  return { inUse: Number(row?.inUse ?? 0), unreviewed: Number(row?.unreviewed ?? 0) };
}

/** The first `limit` rows in use not reviewed since `cutoff`: never reviewed first, then oldest review first, then by name. */
export async function listUnreviewed(db: Db, cutoff: Date, limit: number): Promise<{ name: string; lastReviewedAt: Date | null }[]> {
  if (limit <= 0) return [];
  return db
    .select({ name: t.name, lastReviewedAt: t.lastReviewedAt })
    .from(t)
    .where(unreviewedSince(cutoff))
    .orderBy(sql`${t.lastReviewedAt} ASC NULLS FIRST`, sql`lower(${t.name})`, asc(t.name))
    .limit(limit);
}
