import { eq } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { chaosFreeze } from '../schema.ts';

/** The only SQL of the freeze switch: one row per scope (`global`, seeded by the migration). */

export type FreezeRow = typeof chaosFreeze.$inferSelect;

export async function freezeRow(db: Db, scope: string): Promise<FreezeRow | null> {
  const [row] = await db.select().from(chaosFreeze).where(eq(chaosFreeze.scope, scope));
  return row ?? null;
}

export async function lockFreezeRow(tx: Db, scope: string): Promise<FreezeRow | null> {
  const [row] = await tx.select().from(chaosFreeze).where(eq(chaosFreeze.scope, scope)).for('update');
  return row ?? null;
}

/** Writes the scope's row, inserting it should it be missing. */
export async function writeFreezeRow(tx: Db, row: FreezeRow): Promise<void> {
  await tx
    .insert(chaosFreeze)
    .values(row)
    .onConflictDoUpdate({ target: chaosFreeze.scope, set: { frozen: row.frozen, reason: row.reason, updatedBy: row.updatedBy, updatedAt: row.updatedAt } });
}
