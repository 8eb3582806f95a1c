import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { Database } from '../../src/platform/db/client.ts';

/**
 * For tests of one migration over data written before it: the shipped migrations folder, and a
 * copy of it whose journal stops before a given migration, applied with either driver's migrator.
 */

/** The shipped migrations (drizzle/). */
export const MIGRATIONS = fileURLToPath(new URL('../../drizzle/', import.meta.url));

/** A copy of the shipped migrations whose journal ends before migration `idx`; `remove` deletes it. */
export function migrationsBefore(idx: number): { folder: string; remove: () => void } {
  const folder = mkdtempSync(join(tmpdir(), 'observatory-migrations-'));
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as { entries: { idx: number }[] };
  journal.entries = journal.entries.filter((entry) => entry.idx < idx);
  writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Applies the migrations in `folder` that `database` has not applied yet. */
export async function migrateFrom(database: Database, folder: string): Promise<void> {
  if (database.driver === 'pglite') await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: folder });
  else await migrateNodePg(database.db as unknown as NodePgDatabase, { migrationsFolder: folder });
}
