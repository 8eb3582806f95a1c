import { and, asc, count, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { federationRegions as r } from '../schema.ts';

/** The only SQL of the regions registry (table in ../schema.ts, migration 0025). */

export type RegionRow = typeof r.$inferSelect;

/** Every registered region, by key (the registry is capped at MAX_REGIONS rows). */
export async function listRegions(db: Db): Promise<RegionRow[]> {
  return db.select().from(r).orderBy(asc(r.key));
}

export async function regionByKey(db: Db, key: string): Promise<RegionRow | null> {
  const [row] = await db.select().from(r).where(eq(r.key, key)).limit(1);
  return row ?? null;
}

export async function countRegions(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(r);
  return Number(row?.n ?? 0);
}

/** Serialises upserts (the cap and the single primary are checked inside the lock). */
export async function lockRegistry(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('federation-regions'))`);
}

export async function upsertRegion(tx: Db, row: RegionRow): Promise<void> {
  const { key, createdAt, ...changes } = row;
  void key;
  void createdAt;
  await tx.insert(r).values(row).onConflictDoUpdate({ target: r.key, set: changes });
}

/** Clears isPrimary on every row but `key`; returns the keys it cleared. */
export async function clearOtherPrimaries(tx: Db, key: string, at: Date, by: string): Promise<string[]> {
  const rows = await tx
    .update(r)
    .set({ isPrimary: false, updatedAt: at, updatedBy: by })
    .where(and(ne(r.key, key), eq(r.isPrimary, true)))
    .returning({ key: r.key });
  return rows.map((x) => x.key).sort();
}
