import { asc, desc, eq, lt } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { complianceBundles as b } from '../schema.ts';

/** The only SQL of evidence bundles (table in ../schema.ts, migration 0024_compliance). */

/** One file of a bundle as its row names it (the `files` column, in manifest order). */
export interface StoredFile {
  name: string;
  /** The full key in its store (the storage prefix included). */
  key: string;
  contentType: string;
  bytes: number;
  sha256: string;
}

export type BundleRow = Omit<typeof b.$inferSelect, 'files'> & { files: StoredFile[] };

export async function insertBundle(tx: Db, row: BundleRow): Promise<void> {
  await tx.insert(b).values(row);
}

export async function bundleById(db: Db, id: string): Promise<BundleRow | null> {
  const [row] = await db.select().from(b).where(eq(b.id, id)).limit(1);
  return (row as BundleRow | undefined) ?? null;
}

/**
 * The bundles past their keep: created before `before`, and those beyond the newest `keep`
 * (compliance_bundles_created_idx), oldest first.
 */
export async function bundlesPastKeep(db: Db, before: Date, keep: number): Promise<BundleRow[]> {
  const old = await db.select().from(b).where(lt(b.createdAt, before)).orderBy(asc(b.createdAt), asc(b.id));
  const beyond = await db.select().from(b).orderBy(desc(b.createdAt), desc(b.id)).offset(keep);
  const byId = new Map([...old, ...beyond].map((row) => [row.id, row as BundleRow]));
  return [...byId.values()].sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : 1));
}

/** Deletes a bundle's row; false when it was gone already (another instance pruned it). */
export async function deleteBundle(tx: Db, id: string): Promise<boolean> {
  const deleted = await tx.delete(b).where(eq(b.id, id)).returning({ id: b.id });
  return deleted.length > 0;
}
