import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { type Database, openDatabase, pgliteDatabase, rowsOf } from '../../src/platform/db/client.ts';
import {
  databaseUrl,
  dropServerDatabase,
  migratedPgliteDump,
  migrateServerDatabase,
  onServerAdmin,
  PGLITE_DUMP_ENV,
  SERVER_TEMPLATE_ENV,
} from './template-database.ts';

/**
 * A fresh, migrated database for one test file: PGlite in memory by default; with DATABASE_URL
 * set, a new database on that server (dropped afterwards), so test files never share state. Both
 * are copies of one database migrated once per run (test/helpers/template-database.ts), so a
 * test file neither pays for the migrations nor has to run them: `Database.migrate()` (which
 * `createApp` calls) finds every migration applied and only runs its `afterMigrate`.
 */
export interface TestDatabase {
  /** Opens a connection (pool) to the fresh database; call it twice for two "instances". */
  open(): Promise<Database>;
  /** The URL of the fresh server database, or null on PGlite. */
  url: string | null;
  drop(): Promise<void>;
}

export const onServer = Boolean(process.env.DATABASE_URL);

export interface TestDatabaseOptions {
  /**
   * Opens the fresh server database at `url` instead of the default pool (a test reaching it
   * through a proxy, or with the service's own pool settings). Unused on PGlite.
   */
  open?: (url: string) => Promise<Database>;
  /**
   * An empty database, no migration applied: for the tests of the migrations themselves and of a
   * first start on new storage.
   */
  empty?: boolean;
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) return serverDatabase(serverUrl, options);
  if (options.empty) return pgliteDatabaseFrom(null);
  if (process.env.OBSERVATORY_TEST_DB_REUSE === '1') return reusedDatabase();
  return pgliteDatabaseFrom(await migratedDump());
}

/** The usual start of a test file that works on the database itself: a fresh migrated database, opened. */
export async function openTestDatabase(): Promise<{ testDb: TestDatabase; database: Database }> {
  const testDb = await createTestDatabase();
  return { testDb, database: await testDb.open() };
}

async function serverDatabase(serverUrl: string, options: TestDatabaseOptions): Promise<TestDatabase> {
  const name = `obs_test_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? null : process.env[SERVER_TEMPLATE_ENV];
  await onServerAdmin(serverUrl, template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  // A run without the global setup (another vitest config) has no template: migrated here instead.
  if (!options.empty && !template) await migrateServerDatabase(serverUrl, name);
  const url = databaseUrl(serverUrl, name);
  const opened: Database[] = [];
  return {
    url,
    async open() {
      const database = options.open ? await options.open(url) : await openDatabase({ databaseUrl: url, dataDir: null, poolMax: 5 });
      opened.push(database);
      return database;
    },
    async drop() {
      await Promise.allSettled(opened.map((d) => d.close()));
      await dropServerDatabase(serverUrl, name);
    },
  };
}

function pgliteDatabaseFrom(dump: Blob | null): TestDatabase {
  let shared: Promise<Database> | null = null;
  return {
    url: null,
    // PGlite lives in this process: "two instances" share the one embedded database.
    open() {
      shared ??= (async () => {
        const client = dump ? new PGlite({ loadDataDir: dump }) : new PGlite();
        await client.waitReady;
        return pgliteDatabase(client);
      })();
      return shared;
    },
    async drop() {
      await (await shared)?.close();
    },
  };
}

let dumpOfThisProcess: Promise<Blob> | null = null;

/** The migrated dump the global setup named, read once per worker (made here when a run has no global setup). */
function migratedDump(): Promise<Blob> {
  dumpOfThisProcess ??= (async () => new Blob([readFileSync(process.env[PGLITE_DUMP_ENV] || (await migratedPgliteDump()))]))();
  return dumpOfThisProcess;
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
    const opened = await pgliteDatabaseFrom(await migratedDump()).open();
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
