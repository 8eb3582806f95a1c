import { existsSync, readFileSync } from 'node:fs';
import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { type Config, DEFAULT_DB_CONNECT_TIMEOUT_MS, DEFAULT_DB_QUERY_TIMEOUT_MS } from '../config.ts';
import { privateDir } from '../private-dir.ts';
import { lockDataDir } from './data-dir-lock.ts';

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
  /**
   * Turns every session of this instance read-only (true) or writable again (false): the
   * `prisma-readonly-window` chaos fault (docs/chaos/README.md). Reads keep working; a write fails with
   * SQLSTATE 25006, which the API answers 503 `read-only`. Resolves once a fresh checkout shows
   * the new state; a transaction already open keeps the state it began with.
   */
  setReadOnly(on: boolean): Promise<void>;
  /** The state `setReadOnly` last asked for (false until it is called). */
  readOnly(): boolean;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  /** Directory for PGlite's files; `null` keeps the embedded database in memory (tests). */
  dataDir: string | null;
  poolMax?: number;
  /** How long getting a connection (a free one from the pool, or a new one) may take; then 503. */
  connectTimeoutMs?: number;
  /** How long one statement may go unanswered before its connection is closed and the request answered 503; 0: no limit. */
  queryTimeoutMs?: number;
}


/** The options the service opens its database with. */
export function databaseOptions(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolMax' | 'dbConnectTimeoutMs' | 'dbQueryTimeoutMs'>): DatabaseOptions {
  return {
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.dbPoolMax,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openNodePg(options.databaseUrl, {
        poolMax: options.poolMax ?? 10,
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_DB_CONNECT_TIMEOUT_MS,
        queryTimeoutMs: options.queryTimeoutMs ?? DEFAULT_DB_QUERY_TIMEOUT_MS,
      })
    : openPglite(options.dataDir);
}

/**
 * A node-postgres client that fails fast when its server goes away (docs/operations.md, "When
 * PostgreSQL or Redis goes away").
 *
 * - A connection that dies while the client is checked out of the pool (inside a transaction)
 *   emits 'error' with no pool listener attached, which would crash the process: the query in
 *   flight is failed with the error anyway, so the event itself is ignored.
 * - A statement unanswered for `query_timeout` fails with "Query read timeout", but node-postgres
 *   keeps the connection waiting for the answer, so the transaction's ROLLBACK and every later
 *   statement on that connection would queue behind it. Closing the connection fails them at once
 *   and takes the client out of the pool; the server rolls the open transaction back.
 * - drizzle-orm (0.45) sends a transaction's BEGIN before the try/finally that releases its
 *   client, so a BEGIN failing on a dead connection left the client checked out for good: one
 *   pool slot lost per failure, until the pool had none and the service could not recover
 *   (test/db-outage.test.ts). The client is released here, with the error, which removes it.
 */
class FailFastClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => {});
  }

  // Every form of query (promise, callback, submittable) ends in a callback or a promise.
  override query(...args: any[]): any {
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (error: unknown, result: unknown) => void;
      args[last] = (error: unknown, result: unknown) => {
        this.closeIfTimedOut(error);
        callback(error, result);
      };
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      const opensTransaction = BEGIN.test(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown } | undefined)?.text ?? ''));
      return result.catch((error: unknown) => {
        this.closeIfTimedOut(error);
        if (opensTransaction) this.releaseToPool(error);
        throw error;
      });
    }
    return result;
  }

  /** Gives a checked-out client back to its pool with `error` (which removes it); at most once. */
  private releaseToPool(error: unknown): void {
    const self = this as unknown as { release?: (error?: unknown) => void };
    const release = self.release;
    if (typeof release !== 'function') return;
    self.release = () => {};
    release(error instanceof Error ? error : new Error(String(error)));
  }

  private closeIfTimedOut(error: unknown): void {
    if (!(error instanceof Error) || error.message !== QUERY_READ_TIMEOUT) return;
    (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}

/** The statement that gives a session the wanted read-only default. */
const setSessionReadOnly = (on: boolean): string => `SET SESSION default_transaction_read_only = ${on ? 'on' : 'off'}`;

/** What a session answers for its read-only default, `on` or `off`. */
const SHOW_READ_ONLY = 'SHOW default_transaction_read_only';

/** Where a pooled client records the read-only default its session has (absent: the server's, off). */
const APPLIED_READ_ONLY = Symbol('appliedReadOnly');

type PoolCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: boolean | Error) => void) => void;

/**
 * The service's pool: every checkout, for a plain query (`pool.query` checks out through
 * `connect(callback)`) as for a drizzle transaction (`pool.connect()`), first brings the client's
 * session to the wanted read-only default (the read-only window, Database.setReadOnly). A client
 * is checked out only between transactions, and the caller gets it once the SET has answered, so
 * its first statement sees the new default; nothing is queued behind a statement in flight (which
 * node-postgres deprecates). A client whose SET fails is given back with the error, which removes
 * it, and the caller gets the error (503 like any connection failure).
 */
class SessionDefaultsPool extends pg.Pool {
  wantReadOnly = false;

  override connect(...args: unknown[]): any {
    const callback = args[0] as PoolCallback | undefined;
    const ready = super.connect().then((client) => this.withWantedDefaults(client));
    if (typeof callback !== 'function') return ready;
    ready.then(
      (client) => callback(undefined, client, client.release),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), undefined, () => {}),
    );
    return undefined;
  }

  private async withWantedDefaults(client: pg.PoolClient): Promise<pg.PoolClient> {
    const session = client as pg.PoolClient & { [APPLIED_READ_ONLY]?: boolean };
    // Again if setReadOnly changed its mind while the SET was on its way.
    for (let want = this.wantReadOnly; (session[APPLIED_READ_ONLY] ?? false) !== want; want = this.wantReadOnly) {
      try {
        await session.query(setSessionReadOnly(want));
      } catch (error) {
        session.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
      session[APPLIED_READ_ONLY] = want;
    }
    return client;
  }
}

/** How drizzle-orm opens a transaction. */
const BEGIN = /^\s*begin\b/i;

/** node-postgres's message for a statement that outlived `query_timeout`. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

async function openNodePg(
  databaseUrl: string,
  limits: { poolMax: number; connectTimeoutMs: number; queryTimeoutMs: number },
): Promise<Database> {
  const pool = new SessionDefaultsPool({
    connectionString: databaseUrl,
    max: limits.poolMax,
    connectionTimeoutMillis: limits.connectTimeoutMs,
    ...(limits.queryTimeoutMs > 0 ? { query_timeout: limits.queryTimeoutMs } : {}),
    // Idle connections to a server that vanished without a word are found by TCP keepalive.
    keepAlive: true,
    Client: FailFastClient as unknown as new () => pg.ClientBase,
  });
  // An idle client losing its server (restart, failover) must not crash the process; the next
  // query reconnects or fails with 503.
  pool.on('error', () => {});
  const db = drizzleNodePg({ client: pool }) as unknown as Db;
  let closing: Promise<void> | null = null;
  return {
    db,
    driver: 'node-postgres',
    async migrate(afterMigrate) {
      // A connection of its own, without the statement time limit: a migration may build an index
      // for minutes, and waiting for the lock while another instance migrates is expected.
      const client = new FailFastClient({ connectionString: databaseUrl, connectionTimeoutMillis: limits.connectTimeoutMs, keepAlive: true });
      await client.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK_KEY]);
        try {
          await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
          if (afterMigrate) await afterMigrate(db);
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK_KEY]);
        }
      } finally {
        await client.end();
      }
    },
    // A readiness probe must answer within its own deadline, not the statement limit's.
    isReady: () => withDeadline(checkReady(db), limits.connectTimeoutMs, false),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async setReadOnly(on) {
      pool.wantReadOnly = on;
      // A fresh checkout brings its session to the new state first (SessionDefaultsPool): its answer shows the state took.
      const client = await pool.connect();
      try {
        await expectReadOnly(client, on);
      } finally {
        client.release();
      }
    },
    readOnly: () => pool.wantReadOnly,
    close: () => (closing ??= pool.end()),
  };
}

async function openPglite(dataDir: string | null): Promise<Database> {
  if (dataDir === null) {
    const client = new PGlite();
    await client.waitReady;
    return pgliteDatabase(client);
  }
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  await privateDir(dataDir);
  // Before PGlite reads a byte: a second opener is refused, naming the holder (data-dir-lock.ts).
  const lock = lockDataDir(dataDir);
  try {
    await makeDataDirPrivate(dataDir);
    const client = new PGlite(dataDir);
    await client.waitReady;
    // A new data directory's first files are written while PGlite opens it: made private once they exist.
    if (fresh) await makeDataDirPrivate(dataDir);
    return pgliteDatabase(client, () => lock.release());
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * DATA_DIR belongs to the service's user alone (docs/operations.md, "Start-up"): it is created
 * 0700, and at every start an existing one is set to 0700 and nothing inside it stays writable by
 * group or others. PGlite writes a new directory's first files 0666 (the files PostgreSQL creates
 * later are 0600), and a directory made before this rule may be 0755 or worse. Symbolic links are
 * left alone.
 */
async function makeDataDirPrivate(dataDir: string): Promise<void> {
  await privateDir(dataDir);
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      const { mode } = await lstat(path);
      if ((mode & 0o022) !== 0) await chmod(path, mode & 0o7755);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(dataDir);
}

/** A Database over an open PGlite (the embedded database, or a test's copy of a migrated one). */
export function pgliteDatabase(client: PGlite, afterClose: () => void = () => {}): Database {
  const db = drizzlePglite({ client }) as unknown as Db;
  let closed = false;
  let readOnly = false;
  return {
    db,
    driver: 'pglite',
    // PGlite is one process's own database: the data directory's lock (data-dir-lock.ts) keeps
    // every other process out, so the start-up lock is the process itself.
    async migrate(afterMigrate) {
      await migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      if (afterMigrate) await afterMigrate(db);
    },
    isReady: () => (closed ? Promise.resolve(false) : checkReady(db)),
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    // PGlite is one session. Outside `transaction`, exec waits for an open transaction to end
    // (PGlite runs statements and transactions one at a time), so the SET never lands inside one.
    async setReadOnly(on) {
      readOnly = on;
      await client.exec(setSessionReadOnly(on));
      await expectReadOnly(client, on);
    },
    readOnly: () => readOnly,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.close();
      } finally {
        afterClose();
      }
    },
  };
}

/** Throws unless the session answering `session.query` has the read-only default `on`. */
async function expectReadOnly(session: { query(text: string): Promise<{ rows: unknown[] }> }, on: boolean): Promise<void> {
  const result = await session.query(SHOW_READ_ONLY);
  const shown = (result.rows[0] as { default_transaction_read_only?: unknown } | undefined)?.default_transaction_read_only;
  if (shown !== (on ? 'on' : 'off')) throw new Error(`The database session did not take default_transaction_read_only = ${on ? 'on' : 'off'} (it shows ${String(shown)}).`);
}

let shippedMigrations: number | null = null;

function shippedMigrationCount(): number {
  shippedMigrations ??= (
    JSON.parse(readFileSync(`${MIGRATIONS_FOLDER}/meta/_journal.json`, 'utf8')) as { entries: unknown[] }
  ).entries.length;
  return shippedMigrations;
}

/** `work`'s answer, or `fallback` if it has not answered within `ms`. */
function withDeadline<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
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

/** A timestamp column of a raw `execute` row: a Date from node-postgres, a Date or text from PGlite. */
export const asDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)));
export const asDateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : asDate(value));
