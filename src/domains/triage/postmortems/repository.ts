import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { triagePostmortems } from '../schema.ts';

export type PostmortemRow = typeof triagePostmortems.$inferSelect;

export async function postmortemOf(db: Db, incidentId: string): Promise<PostmortemRow | null> {
  const [row] = await db.select().from(triagePostmortems).where(eq(triagePostmortems.incidentId, incidentId));
  return row ?? null;
}

export async function upsertPostmortem(tx: Db, row: PostmortemRow): Promise<PostmortemRow | null> {
  const before = await postmortemOf(tx, row.incidentId);
  await tx
    .insert(triagePostmortems)
    .values(row)
    .onConflictDoUpdate({ target: triagePostmortems.incidentId, set: { draft: row.draft, runId: row.runId, source: row.source, strippedEventIds: row.strippedEventIds, updatedAt: row.updatedAt, updatedBy: row.updatedBy } });
  return before;
}

/**
 * When each of these incidents first had a postmortem (`created_at`, never moved by a
 * replacement); incidents without one are absent. One statement whatever the number of ids: the
 * list travels as one jsonb parameter.
 */
export async function firstWrittenOf(db: Db, incidentIds: readonly string[]): Promise<{ incidentId: string; createdAt: Date }[]> {
  if (incidentIds.length === 0) return [];
  const p = triagePostmortems;
  return db
    .select({ incidentId: p.incidentId, createdAt: p.createdAt })
    .from(p)
    .where(sql`${p.incidentId} IN (SELECT (jsonb_array_elements_text(${JSON.stringify(incidentIds)}::jsonb))::uuid)`);
}
