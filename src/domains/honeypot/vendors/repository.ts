import type { Db } from '../../../platform/db/client.ts';
import { vendorRangeSnapshots } from '../schema.ts';
import type { RangeSnapshotRow } from './registry.ts';

/** The only SQL of the vendor registry: the range lists the refresh job fetched. */

export async function listRangeSnapshots(db: Db): Promise<RangeSnapshotRow[]> {
  return db.select().from(vendorRangeSnapshots).orderBy(vendorRangeSnapshots.vendorId);
}

/** Inserts the vendor's row or replaces it (one row per vendor). */
export async function upsertRangeSnapshot(db: Db, row: RangeSnapshotRow): Promise<void> {
  const { vendorId, ...rest } = row;
  await db.insert(vendorRangeSnapshots).values(row).onConflictDoUpdate({ target: vendorRangeSnapshots.vendorId, set: rest });
}
