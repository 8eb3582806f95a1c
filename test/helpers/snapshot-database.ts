import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { type Database, type Db, MIGRATIONS_FOLDER, pgliteDatabase, rowsOf } from '../../src/platform/db/client.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

/**
 * A fresh database for one test file, like `createTestDatabase`, but on PGlite it starts from a
 * copy of an already migrated database instead of running every migration again.
 *
 * Why: mutation testing (docs/testing.md, "Mutation testing") runs a database-bound test file once
 * per mutant, and applying the migrations is most of such a run. The migrated database is dumped
 * once into the system temp directory, under a name that hashes every migration file, so a changed
 * migration makes a new dump. With DATABASE_URL set this is `createTestDatabase` unchanged.
 */
export async function createSnapshotTestDatabase(): Promise<TestDatabase> {
  if (process.env.DATABASE_URL) return createTestDatabase();
  if (process.env.OBSERVATORY_TEST_DB_REUSE === '1') return reusedDatabase();
  const dump = await migratedDump();
  let shared: Database | null = null;
  return {
    url: null,
    async open() {
      shared ??= await pgliteFrom(dump);
      return shared;
    },
    async drop() {
      await shared?.close();
    },
  };
}

interface Reusable {
  database: Database;
  /** The rows the migrations themselves insert (the audit chain head), by table. */
  seeded: Map<string, unknown>;
  tables: string[];
}

/**
 * For mutation runs only (vitest.mutate.config.ts sets OBSERVATORY_TEST_DB_REUSE=1 and runs test
 * files without isolation): one migrated PGlite per worker thread, kept on globalThis across
 * runs, emptied back to its just-migrated rows for each test file. Starting PGlite costs seconds
 * on a busy machine; emptying its tables costs milliseconds.
 */
async function reusedDatabase(): Promise<TestDatabase> {
  const holder = globalThis as { __observatoryReusedDb?: Promise<Reusable> };
  holder.__observatoryReusedDb ??= (async () => {
    const opened = await pgliteFrom(await migratedDump());
    const database: Database = { ...opened, close: async () => {} };
    const names = rowsOf<{ tablename: string }>(await database.db.execute(sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)).map(
      (r) => r.tablename,
    );
    const seeded = new Map<string, unknown>();
    for (const name of names) {
      const [{ rows }] = rowsOf<{ rows: unknown[] }>(await database.db.execute(sql`SELECT coalesce(json_agg(t), '[]') AS rows FROM ${sql.identifier(name)} t`)) as [{ rows: unknown[] }];
      if (rows.length > 0) seeded.set(name, rows);
    }
    return { database, seeded, tables: names };
  })();
  const reusable = await holder.__observatoryReusedDb;
  let emptied = false;
  return {
    url: null,
    async open() {
      if (!emptied) {
        emptied = true;
        const { db } = reusable.database;
        await db.execute(sql.raw(`TRUNCATE ${reusable.tables.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`));
        for (const [table, rows] of reusable.seeded) {
          await db.execute(sql`INSERT INTO ${sql.identifier(table)} SELECT * FROM json_populate_recordset(NULL::${sql.identifier(table)}, ${JSON.stringify(rows)}::json)`);
        }
      }
      return reusable.database;
    },
    async drop() {},
  };
}

function migrationsHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_FOLDER);
  return hash.digest('hex').slice(0, 16);
}

async function migratedDump(): Promise<Blob> {
  const file = join(tmpdir(), `observatory-migrated-${migrationsHash()}.tar.gz`);
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    const client = new PGlite();
    await client.waitReady;
    await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
    const dumped = await client.dumpDataDir('gzip');
    await client.close();
    const bytes = Buffer.from(await dumped.arrayBuffer());
    // Written aside and renamed, so a concurrent reader never sees half a file.
    const partial = `${file}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, bytes);
    renameSync(partial, file);
    return new Blob([bytes]);
  }
}

async function pgliteFrom(dump: Blob): Promise<Database> {
  const client = new PGlite({ loadDataDir: dump });
  await client.waitReady;
  return pgliteDatabase(client);
}
