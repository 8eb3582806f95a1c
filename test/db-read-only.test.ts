import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.ts';
import { type Database, type Db, openDatabase, rowsOf } from '../src/platform/db/client.ts';
import { isReadOnlyRefusal, withTransaction, withWritableTransaction } from '../src/platform/db/transaction.ts';
import { READ_ONLY_RETRY_AFTER_SEC } from '../src/platform/http/errors.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { createTestDatabase, onServer, type TestDatabase } from './helpers/database.ts';

/**
 * The database's read-only window (Database.setReadOnly; the `prisma-readonly-window` chaos kind,
 * docs/chaos/README.md): while it is on, reads answer as usual, every write is 503 `read-only` with
 * nothing written, `withWritableTransaction` (the chaos runner's own records) still writes, and
 * turning it off lets the same write through. On PostgreSQL, every session of the pool takes it,
 * those opened during the window too.
 */

const budget = (scopeKey: string) => ({ scope: 'toolset', scopeKey, monthlyUsd: 100, alertAtPct: [50, 100], destinations: [] });

async function budgetCount(db: Db): Promise<number> {
  return Number(rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM cost_budgets`))[0]!.n);
}

const freezeReason = async (db: Db): Promise<string> =>
  rowsOf<{ reason: string }>(await db.execute(sql`SELECT reason FROM chaos_freeze WHERE scope = 'global'`))[0]!.reason;

describe('the read-only window', () => {
  const clock = new ManualClock('2026-11-20T10:00:00.000Z');
  let t: TestApp;
  let db: Db;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    db = t.app.database.db;
  }, 120_000);
  afterAll(async () => {
    await t?.app.database.setReadOnly(false).catch(() => {});
    await t?.close();
  });

  it('refuses writes with 503 read-only and nothing written, keeps reads answering, and lets the write through once off', async () => {
    const database = t.app.database;
    // Several connections in the pool (on PostgreSQL) before the window opens, so more than one session must take it.
    const warm = await Promise.all(Array.from({ length: 8 }, () => t.call({ method: 'GET', url: `${V1}/cost/budgets` })));
    expect(warm.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    if (onServer) expect(database.poolStats().total).toBeGreaterThan(1);

    expect(database.readOnly()).toBe(false);
    await database.setReadOnly(true);
    expect(database.readOnly()).toBe(true);

    const refused = await Promise.all(Array.from({ length: 8 }, (_, i) => t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload: budget(`ro-lab-${i}`) })));
    for (const res of refused) {
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe(String(READ_ONLY_RETRY_AFTER_SEC));
      expect(res.json()).toMatchObject({
        schema: 'svc-error.v1',
        reason: 'read-only',
        human: `The database is read-only for a moment; nothing was written. Try again in ${READ_ONLY_RETRY_AFTER_SEC} s.`,
        retryAfterSec: READ_ONLY_RETRY_AFTER_SEC,
      });
    }
    expect(await budgetCount(db)).toBe(0);

    // Reads answer, concurrently, and past the minute after which a token's use is stamped (a write, skipped in the window).
    clock.advance(2 * 60_000);
    const reads = await Promise.all(Array.from({ length: 8 }, () => t.call({ method: 'GET', url: `${V1}/cost/budgets` })));
    expect(reads.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(reads[0]!.json().budgets).toEqual([]);

    // A plain transaction is refused; the writable one writes.
    const plain = await withTransaction(db, (tx) => tx.execute(sql`UPDATE chaos_freeze SET reason = 'plain' WHERE scope = 'global'`)).catch((e: unknown) => e);
    expect(isReadOnlyRefusal(plain)).toBe(true);
    await withWritableTransaction(db, (tx) => tx.execute(sql`UPDATE chaos_freeze SET reason = 'written in the window' WHERE scope = 'global'`));
    expect(await freezeReason(db)).toBe('written in the window');

    await database.setReadOnly(false);
    expect(database.readOnly()).toBe(false);
    const written = await Promise.all(Array.from({ length: 8 }, (_, i) => t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload: budget(`ro-lab-${i}`) })));
    expect(written.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(await budgetCount(db)).toBe(8);
  });

  it('lets a transaction open when the window starts finish its writes, and takes effect after it', async () => {
    const database = t.app.database;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const begun = new Promise<void>((resolve) => {
      started = resolve;
    });
    const open = withTransaction(db, async (tx) => {
      await tx.execute(sql`UPDATE chaos_freeze SET reason = 'begun before the window' WHERE scope = 'global'`);
      started();
      await gate;
      await tx.execute(sql`UPDATE chaos_freeze SET reason = 'committed across the window' WHERE scope = 'global'`);
    });
    await begun;
    let switched = false;
    const switching = database.setReadOnly(true).then(() => {
      switched = true;
    });
    // PGlite is one session: the SET waits for the open transaction instead of landing inside it.
    if (!onServer) {
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(switched).toBe(false);
    }
    release();
    await open;
    await switching;
    expect(await freezeReason(db)).toBe('committed across the window');
    const res = await t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload: budget('after-the-open-one') });
    expect(res.statusCode).toBe(503);
    await database.setReadOnly(false);
  });
});

describe.skipIf(!onServer)('the read-only window on every pooled PostgreSQL session', () => {
  let testDb: TestDatabase;
  let database: Database;
  const POOL = 5;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    // A pool of its own, empty at first: every session but the one setReadOnly checks is opened during the window.
    database = await openDatabase({ databaseUrl: testDb.url!, dataDir: null, poolMax: POOL });
    await database.db.execute(sql`CREATE TABLE scratch (n int)`);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  /** Holds every connection of the pool at once and answers each one's backend and read-only default. */
  const everySession = () =>
    Promise.all(
      Array.from({ length: POOL }, () =>
        database.db
          .execute(sql`SELECT pg_backend_pid() AS pid, current_setting('default_transaction_read_only') AS ro, pg_sleep(0.2)`)
          .then((r) => rowsOf<{ pid: number; ro: string }>(r)[0]!),
      ),
    );

  it('reaches the sessions opened during the window and every one after it closes', async () => {
    const before = database.poolStats().total;
    await database.setReadOnly(true);
    const during = await everySession();
    expect(new Set(during.map((s) => s.pid)).size).toBe(POOL);
    expect(database.poolStats().total).toBeGreaterThan(before);
    expect(during.map((s) => s.ro)).toEqual(Array(POOL).fill('on'));
    const writes = await Promise.all(Array.from({ length: POOL * 2 }, () => database.db.execute(sql`INSERT INTO scratch VALUES (1)`).catch((e: unknown) => e)));
    expect(writes.every(isReadOnlyRefusal)).toBe(true);
    // The writable transaction, on a session whose default is read-only.
    await Promise.all(Array.from({ length: POOL }, () => withWritableTransaction(database.db, (tx) => tx.execute(sql`INSERT INTO scratch VALUES (2)`))));

    await database.setReadOnly(false);
    const after = await everySession();
    expect(after.map((s) => s.ro)).toEqual(Array(POOL).fill('off'));
    await Promise.all(Array.from({ length: POOL * 2 }, () => database.db.execute(sql`INSERT INTO scratch VALUES (3)`)));
    const counts = rowsOf<{ n: number; count: number }>(await database.db.execute(sql`SELECT n, count(*)::int AS count FROM scratch GROUP BY n ORDER BY n`));
    expect(counts).toEqual([
      { n: 2, count: POOL },
      { n: 3, count: POOL * 2 },
    ]);
  });
});
