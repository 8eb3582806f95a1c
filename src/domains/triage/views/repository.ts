import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../../platform/db/paging.ts';
import { triageSavedViews } from '../schema.ts';

export type SavedViewRow = typeof triageSavedViews.$inferSelect;

export async function insertSavedView(tx: Db, row: SavedViewRow): Promise<void> {
  await tx.insert(triageSavedViews).values(row);
}

export async function listSavedViews(db: Db, filter: { reach: readonly string[] | null; cursor: TimeCursor | null; limit: number }): Promise<SavedViewRow[]> {
  const v = triageSavedViews;
  const where = and(
    filter.reach === null ? undefined : filter.reach.length === 0 ? sql`false` : inArray(v.toolset, [...filter.reach]),
    filter.cursor === null ? undefined : olderThan(v.createdAt, v.id, filter.cursor),
  );
  return db.select().from(v).where(where).orderBy(desc(v.createdAt), desc(v.id)).limit(filter.limit);
}

export async function savedViewById(db: Db, id: string): Promise<SavedViewRow | null> {
  const [row] = await db.select().from(triageSavedViews).where(eq(triageSavedViews.id, id));
  return row ?? null;
}

