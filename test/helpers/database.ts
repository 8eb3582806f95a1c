import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/platform/db/client.ts';

/**
 * A fresh database for one test file: PGlite in memory by default; with DATABASE_URL set, a new
 * database created on that server (and dropped afterwards), so test files never share state.
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
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    let shared: Database | null = null;
    return {
      url: null,
      // PGlite lives in this process: "two instances" share the one embedded database.
      async open() {
        shared ??= await openDatabase({ databaseUrl: null, dataDir: null });
        return shared;
      },
      async drop() {
        await shared?.close();
      },
    };
  }
  const name = `obs_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const opened: Database[] = [];
  return {
    url: url.toString(),
    async open() {
      const database = options.open ? await options.open(url.toString()) : await openDatabase({ databaseUrl: url.toString(), dataDir: null, poolMax: 5 });
      opened.push(database);
      return database;
    },
    async drop() {
      await Promise.allSettled(opened.map((d) => d.close()));
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
