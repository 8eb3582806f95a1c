import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';

/** The one database type every repository takes; a transaction is one too. */
export type Db = PgDatabase<PgQueryResultHKT>;

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../drizzle', import.meta.url));

/** Fixed advisory-lock key that serialises start-up work (migrations, bootstrap) across instances. */
const STARTUP_LOCK_KEY = 7_264_001;

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Database {
  readonly db: Db;
  readonly driver: 'node-postgres' | 'pglite';
  /** Applies pending migrations, then runs `afterMigrate`, all under one cross-instance lock. */
  migrate(afterMigrate?: (db: Db) => Promise<void>): Promise<void>;
  /** True when the database answers and every shipped migration is applied. */
  isReady(): Promise<boolean>;
  poolStats(): PoolStats;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  /** Directory for PGlite's files; `null` keeps the embedded database in memory (tests). */
  dataDir: string | null;
  poolMax?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openNodePg(options.databaseUrl, options.poolMax ?? 10)
    : openPglite(options.dataDir);
}

async function openNodePg(databaseUrl: string, poolMax: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server (restart, failover) must not crash the process; the next
  // query reconnects or fails with 503.
  pool.on('error', () => {});
  const db = drizzleNodePg({ client: pool }) as unknown as Db;
  let closing: Promise<void> | null = null;
  return {
    db,
    driver: 'node-postgres',
    async migrate(afterMigrate) {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK_KEY]);
        try {
          await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
          if (afterMigrate) await afterMigrate(db);
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK_KEY]);
        }
      } finally {
        client.release();
      }
    },
    isReady: () => checkReady(db),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => (closing ??= pool.end()),
  };
}

async function openPglite(dataDir: string | null): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const client = dataDir ? new PGlite(dataDir) : new PGlite();
  await client.waitReady;
  const db = drizzlePglite({ client }) as unknown as Db;
  let closed = false;
  return {
    db,
    driver: 'pglite',
    // PGlite is one process's own database: no other instance can open the same files, so the
    // start-up lock is the process itself.
    async migrate(afterMigrate) {
      await migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      if (afterMigrate) await afterMigrate(db);
    },
    isReady: () => (closed ? Promise.resolve(false) : checkReady(db)),
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}

let shippedMigrations: number | null = null;

function shippedMigrationCount(): number {
  shippedMigrations ??= (
    JSON.parse(readFileSync(`${MIGRATIONS_FOLDER}/meta/_journal.json`, 'utf8')) as { entries: unknown[] }
  ).entries.length;
  return shippedMigrations;
}

async function checkReady(db: Db): Promise<boolean> {
  try {
    const result = await db.execute(sql`SELECT count(*)::int AS applied FROM drizzle.__drizzle_migrations`);
    const applied = Number(rowsOf<{ applied: number }>(result)[0]?.applied ?? 0);
    return applied >= shippedMigrationCount();
  } catch {
    return false;
  }
}

/** Both drivers answer `execute` with an object carrying `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}
