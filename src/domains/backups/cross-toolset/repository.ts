import { and, asc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';
import { backupToolsets as t, type StoredCheck } from './schema.ts';

/** The only SQL of the cross-toolset restore view: the registered toolsets and their last checks. */

export type ToolsetRow = typeof t.$inferSelect;

/** The registered toolsets by name, those of `reach` only (null: every one; platform/db/reach.ts). */
export async function listToolsets(db: Db, reach: readonly string[] | null = null): Promise<ToolsetRow[]> {
  return db.select().from(t).where(toolsetInReach(t.toolset, reach)).orderBy(asc(t.toolset));
}

export async function toolsetByName(db: Db, toolset: string): Promise<ToolsetRow | null> {
  const [row] = await db.select().from(t).where(eq(t.toolset, toolset));
  return row ?? null;
}

export async function lockToolset(tx: Db, toolset: string): Promise<ToolsetRow | null> {
  const [row] = await tx.select().from(t).where(eq(t.toolset, toolset)).for('update');
  return row ?? null;
}

/**
 * Inserts or replaces the registration; returns the stored row. A replaced registration keeps its
 * last check only while its URL and database stay the same (otherwise the check was of another
 * endpoint); `lastAskedAt` stays, so re-registering does not lift the minimum interval.
 */
export async function upsertToolset(tx: Db, row: Omit<ToolsetRow, 'lastAskedAt' | 'lastCheck'>): Promise<ToolsetRow> {
  const [stored] = await tx
    .insert(t)
    .values({ ...row, lastAskedAt: null, lastCheck: null })
    .onConflictDoUpdate({
      target: t.toolset,
      set: {
        verifyUrl: row.verifyUrl,
        database: row.database,
        vercelProject: row.vercelProject,
        updatedAt: row.updatedAt,
        updatedBy: row.updatedBy,
        lastCheck: sql`CASE WHEN ${t.verifyUrl} = excluded.verify_url AND ${t.database} = excluded.database THEN ${t.lastCheck} END`,
      },
    })
    .returning();
  return stored!;
}

export async function deleteToolset(tx: Db, toolset: string): Promise<void> {
  await tx.delete(t).where(eq(t.toolset, toolset));
}

export async function countToolsets(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(t);
  return row?.n ?? 0;
}

/**
 * Claims the named toolsets for asking at `now`: those never asked or last asked at or before
 * `askedBefore` get `lastAskedAt = now` and are returned; the others (asked too recently) are
 * left alone. One statement, so two instances never both claim a toolset.
 */
export async function claimForAsking(db: Db, toolsets: string[], now: Date, askedBefore: Date): Promise<ToolsetRow[]> {
  if (toolsets.length === 0) return [];
  return db
    .update(t)
    .set({ lastAskedAt: now })
    .where(and(inArray(t.toolset, toolsets), or(isNull(t.lastAskedAt), lte(t.lastAskedAt, askedBefore))))
    .returning();
}

/**
 * Stores what a check found and, when the toolset was asked, moves `lastAskedAt` to when the ask
 * ended; only while the toolset is still registered with the URL and database that were checked.
 */
export async function storeCheck(tx: Db, asked: { toolset: string; verifyUrl: string; database: string }, check: StoredCheck, askEndedAt: Date | null): Promise<void> {
  await tx
    .update(t)
    .set(askEndedAt === null ? { lastCheck: check } : { lastCheck: check, lastAskedAt: askEndedAt })
    .where(and(eq(t.toolset, asked.toolset), eq(t.verifyUrl, asked.verifyUrl), eq(t.database, asked.database)));
}

/**
 * Serialises registrations across connections for the count cap: a transaction-scoped advisory
 * lock, released at commit.
 */
export async function lockRegistrations(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(7264015)`);
}
