import { eq } from 'drizzle-orm';
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
