import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';

/** The only SQL of federation digests: the applied migrations, as drizzle's migrator records them. */

/** The hash of every applied migration, in the order they were applied (drizzle.__drizzle_migrations, by id). */
export async function appliedMigrationHashes(db: Db): Promise<string[]> {
  const rows = rowsOf<{ hash: string }>(await db.execute(sql`SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id`));
  return rows.map((r) => String(r.hash));
}
