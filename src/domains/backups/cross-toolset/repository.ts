import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { backupToolsets as t } from './schema.ts';

/** The only SQL of the cross-toolset restore view: the registered toolsets. */

export type ToolsetRow = typeof t.$inferSelect;

export async function listToolsets(db: Db): Promise<ToolsetRow[]> {
  return db.select().from(t).orderBy(asc(t.toolset));
}

export async function lockToolset(tx: Db, toolset: string): Promise<ToolsetRow | null> {
  const [row] = await tx.select().from(t).where(eq(t.toolset, toolset)).for('update');
  return row ?? null;
}

/** Inserts or replaces the registration; returns the stored row. */
export async function upsertToolset(tx: Db, row: ToolsetRow): Promise<ToolsetRow> {
  const [stored] = await tx
    .insert(t)
    .values(row)
    .onConflictDoUpdate({
      target: t.toolset,
      set: { verifyUrl: row.verifyUrl, database: row.database, vercelProject: row.vercelProject, updatedAt: row.updatedAt, updatedBy: row.updatedBy },
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
 * Serialises registrations across connections for the count cap: a transaction-scoped advisory
 * lock, released at commit.
 */
export async function lockRegistrations(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(7264015)`);
}
