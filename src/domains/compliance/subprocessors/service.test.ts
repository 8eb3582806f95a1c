import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, onServer, type TestDatabase } from '../../../../test/helpers/database.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Database, type Db, rowsOf } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { SUBPROCESSOR_REVIEW_MAX_AGE_DAYS } from '../evaluation/predicates.ts';
import { createSubprocessorService, SUBPROCESSORS_MAX } from './service.ts';

// The subprocessor service on a database (both drivers): the review state the compliance check
// reads, counted in SQL as the clock ages the rows; concurrent upserts of one name; the row cap.
// The HTTP behaviour is in subprocessors.test.ts.

const DAY = 86_400_000;
const T0 = new Date('2026-01-10T09:00:00.000Z');
const clock = new ManualClock(T0);

let testDb: TestDatabase;
let database: Database;
/** A second pool on the same database (PostgreSQL), as a second instance; the same one on PGlite. */
let second: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  second = await testDb.open();
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});
beforeEach(async () => {
  await database.db.execute(sql`DELETE FROM compliance_subprocessors`);
  clock.set(T0);
});

const serviceOn = (db: Db) => createSubprocessorService({ db, clock, audit: createAuditLog({ clock }) });
const alice: Principal = { userId: 'user-alice', username: 'alice', scopes: new Set(['write:alerts']), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
const ctx = { principal: alice, requestId: 'req-1' };

async function names(): Promise<string[]> {
  return rowsOf<{ name: string }>(await database.db.execute(sql`SELECT name FROM compliance_subprocessors ORDER BY name`)).map((r) => r.name);
}

describe('reviewState', () => {
  it('counts rows in use and those not reviewed within maxAgeDays, never-reviewed first, then oldest review', async () => {
    const service = serviceOn(database.db);
    const empty = await service.reviewState(clock.now(), SUBPROCESSOR_REVIEW_MAX_AGE_DAYS, 10);
    expect(empty).toEqual({ inUse: 0, unreviewedCount: 0, unreviewed: [] });

    // Day 0: B and C reviewed; A and D never. Day 100: E reviewed. Day 200: C reviewed again; F archived (never reviewed).
    await service.upsert(ctx, { name: 'Bravo', role: 'cdn', markReviewed: true });
    await service.upsert(ctx, { name: 'Charlie', role: 'ai', markReviewed: true });
    await service.upsert(ctx, { name: 'alpha', role: 'auth' });
    await service.upsert(ctx, { name: 'Delta', role: 'other' });
    clock.advance(100 * DAY);
    await service.upsert(ctx, { name: 'Echo', role: 'email', markReviewed: true });
    const foxtrot = await service.upsert(ctx, { name: 'Foxtrot', role: 'storage' });
    clock.advance(100 * DAY);
    await service.upsert(ctx, { name: 'Charlie', role: 'ai', markReviewed: true });
    await service.act(ctx, foxtrot.row.id, 'archive');

    // Day 200: only the never-reviewed are unreviewed.
    let state = await service.reviewState(clock.now(), 365, 10);
    expect(state).toEqual({
      inUse: 5,
      unreviewedCount: 2,
      unreviewed: [
        { name: 'alpha', lastReviewedAt: null },
        { name: 'Delta', lastReviewedAt: null },
      ],
    });

    // Exactly 365 days after Bravo's review it still counts as reviewed; a millisecond later it does not.
    clock.set(new Date(T0.getTime() + 365 * DAY));
    expect((await service.reviewState(clock.now(), 365, 10)).unreviewedCount).toBe(2);
    clock.advance(1);
    state = await service.reviewState(clock.now(), 365, 10);
    expect(state.unreviewed).toEqual([
      { name: 'alpha', lastReviewedAt: null },
      { name: 'Delta', lastReviewedAt: null },
      { name: 'Bravo', lastReviewedAt: T0.toISOString() },
    ]);

    // Day 466: Echo's review (day 100) is past too; Charlie's (day 200) is not. The list is capped, the count is not.
    clock.set(new Date(T0.getTime() + 466 * DAY));
    state = await service.reviewState(clock.now(), 365, 2);
    expect(state.inUse).toBe(5);
    expect(state.unreviewedCount).toBe(4);
    expect(state.unreviewed).toEqual([
      { name: 'alpha', lastReviewedAt: null },
      { name: 'Delta', lastReviewedAt: null },
    ]);
    expect((await service.reviewState(clock.now(), 365, 10)).unreviewed.map((u) => u.name)).toEqual(['alpha', 'Delta', 'Bravo', 'Echo']);
    expect((await service.reviewState(clock.now(), 365, 0)).unreviewed).toEqual([]);

    // Reviewing one and archiving another moves the counts.
    const delta = (await service.list({})).rows.find((r) => r.name === 'Delta')!;
    await service.act(ctx, delta.id, 'review');
    const alpha = (await service.list({})).rows.find((r) => r.name === 'alpha')!;
    await service.act(ctx, alpha.id, 'archive');
    state = await service.reviewState(clock.now(), 365, 10);
    expect(state).toEqual({
      inUse: 4,
      unreviewedCount: 2,
      unreviewed: [
        { name: 'Bravo', lastReviewedAt: T0.toISOString() },
        { name: 'Echo', lastReviewedAt: new Date(T0.getTime() + 100 * DAY).toISOString() },
      ],
    });
  });

  it('refuses a nonsensical age or list length', async () => {
    const service = serviceOn(database.db);
    await expect(service.reviewState(T0, -1, 10)).rejects.toThrow(/maxAgeDays/);
    await expect(service.reviewState(T0, 365, 1.5)).rejects.toThrow(/listedMax/);
  });
});

describe('upsert concurrency', () => {
  it('two upserts of one name at once (one spelled otherwise, on two pools) make one row, both answered', async () => {
    const results = await Promise.allSettled([
      serviceOn(database.db).upsert(ctx, { name: 'Acme', role: 'infra', region: 'EU' }),
      serviceOn(second.db).upsert(ctx, { name: 'ACME ', role: 'infra', region: 'US' }),
      serviceOn(second.db).upsert(ctx, { name: 'Acme', role: 'infra', region: 'EU' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(await names()).toHaveLength(1);
    const ids = results.map((r) => (r as PromiseFulfilledResult<{ row: { id: string } }>).value.row.id);
    expect(new Set(ids).size).toBe(1);
  });

  it.runIf(onServer)('an insert of the exact name that commits while the upsert waits on it (ON CONFLICT DO NOTHING) is changed, not duplicated', async () => {
    // A writer that takes no upsert lock (a second instance of an older version, say) inserts
    // `Acme` and holds its transaction open: the upsert finds no row, its insert waits on the
    // unique index, does nothing once the writer commits, and the upsert changes that row.
    const id = '7d1c2b3a-4e5f-4a6b-9c8d-0e1f2a3b4c5d';
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let written!: () => void;
    const insertedUncommitted = new Promise<void>((resolve) => (written = resolve));
    const writer = second.db.transaction(async (tx) => {
      await tx.execute(sql`
        INSERT INTO compliance_subprocessors (id, name, role, data_access, region, notes, created_at, updated_at)
        VALUES (${id}, 'Acme', 'infra', '', '', '', now(), now())`);
      written();
      await held;
    });
    await insertedUncommitted;
    const upsert = serviceOn(database.db).upsert(ctx, { name: 'Acme', role: 'cdn' });
    // Until the upsert's insert waits on the writer's row lock (polled through another connection).
    for (;;) {
      const [row] = rowsOf<{ n: number }>(
        await database.db.execute(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'insert into "compliance_subprocessors"%'`),
      );
      if (row!.n > 0) break;
    }
    commit();
    await writer;
    expect((await upsert).row).toMatchObject({ id, name: 'Acme', role: 'cdn' });
    expect(await names()).toEqual(['Acme']);
  });

  it.runIf(onServer)('many concurrent upserts of names equal ignoring case on two pools never fail and leave one row', async () => {
    const spellings = ['Globex', 'globex', 'GLOBEX', ' Globex ', 'GloBex', 'globeX'];
    const results = await Promise.allSettled(spellings.map((name, i) => serviceOn((i % 2 === 0 ? database : second).db).upsert(ctx, { name, role: 'billing' })));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await names()).toHaveLength(1);
  });
});

describe('the row cap', () => {
  it(`refuses a new name once ${SUBPROCESSORS_MAX} rows exist (archived included), but still changes existing ones`, async () => {
    await database.db.execute(sql`
      INSERT INTO compliance_subprocessors (id, name, role, data_access, region, notes, archived_at, created_at, updated_at)
      SELECT gen_random_uuid(), 'vendor-' || n, 'other', '', '', '', CASE WHEN n % 2 = 0 THEN now() END, now(), now()
        FROM generate_series(1, ${SUBPROCESSORS_MAX}) AS n`);
    const service = serviceOn(database.db);
    const error = await service.upsert(ctx, { name: 'One too many', role: 'other' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 409, reason: 'limit-reached' });
    expect((await service.upsert(ctx, { name: 'VENDOR-2', role: 'cdn' })).row).toMatchObject({ name: 'VENDOR-2', role: 'cdn', archivedAt: null });
    // Every row fits in the list.
    expect((await service.list({ includeArchived: '1' })).rows).toHaveLength(SUBPROCESSORS_MAX);
  });
});
