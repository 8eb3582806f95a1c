import { and, asc, count, eq, inArray, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { graphSavedQueries } from '../schema.ts';

export type SavedQueryRow = typeof graphSavedQueries.$inferSelect;

/** Visible to `userId`: its own queries and every `workspace` or `public` one. */
const visibleTo = (userId: string) =>
  or(eq(graphSavedQueries.ownerUserId, userId), inArray(graphSavedQueries.visibility, ['workspace', 'public']));

export async function listVisible(db: Db, userId: string, max: number): Promise<SavedQueryRow[]> {
  return db
    .select()
    .from(graphSavedQueries)
    .where(visibleTo(userId))
    .orderBy(asc(graphSavedQueries.name), asc(graphSavedQueries.ownerUserId))
    .limit(max);
}

export async function findOwn(db: Db, userId: string, name: string, lock = false): Promise<SavedQueryRow | null> {
  const query = db
    .select()
    .from(graphSavedQueries)
    .where(and(eq(graphSavedQueries.ownerUserId, userId), eq(graphSavedQueries.name, name)));
  const [row] = lock ? await query.for('update') : await query;
  return row ?? null;
}

/** The queries named `name` the caller may run, its own first (at most `max`). */
export async function findVisibleByName(db: Db, userId: string, name: string, max: number): Promise<SavedQueryRow[]> {
  return db
    .select()
    .from(graphSavedQueries)
    .where(and(eq(graphSavedQueries.name, name), visibleTo(userId)))
    .orderBy(sql`${graphSavedQueries.ownerUserId} = ${userId} DESC`, asc(graphSavedQueries.createdAt))
    .limit(max);
}

/** Whether an operator other than `userId` shares (workspace or public) a query named `name`. */
export async function sharedByOther(db: Db, userId: string, name: string): Promise<boolean> {
  const [row] = await db
    .select({ id: graphSavedQueries.id })
    .from(graphSavedQueries)
    .where(and(eq(graphSavedQueries.name, name), inArray(graphSavedQueries.visibility, ['workspace', 'public']), ne(graphSavedQueries.ownerUserId, userId)))
    .limit(1);
  return row !== undefined;
}

export async function countOwned(db: Db, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(graphSavedQueries).where(eq(graphSavedQueries.ownerUserId, userId));
  return Number(row?.n ?? 0);
}

export async function insert(db: Db, row: SavedQueryRow): Promise<SavedQueryRow> {
  const [stored] = await db.insert(graphSavedQueries).values(row).returning();
  return stored!;
}

export async function update(
  db: Db,
  id: string,
  change: Pick<SavedQueryRow, 'query' | 'description' | 'visibility' | 'updatedAt'>,
): Promise<SavedQueryRow> {
  const [stored] = await db.update(graphSavedQueries).set(change).where(eq(graphSavedQueries.id, id)).returning();
  return stored!;
}

/** Counts one run of a saved query. */
export async function recordRun(db: Db, id: string, at: Date): Promise<void> {
  await db
    .update(graphSavedQueries)
    .set({ runCount: sql`${graphSavedQueries.runCount} + 1`, lastRunAt: at })
    .where(eq(graphSavedQueries.id, id));
}
