import { sql } from 'drizzle-orm';
import { bigserial, pgTable, timestamp } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { ManualClock } from '../clock.ts';
import { rowsOf } from './client.ts';
import { deleteOlderThan, SLO_SAMPLE_RETENTION_MS } from './retention.ts';

// The columns of a samples table that retention reads (declared here: the platform imports no domain).
const samples = pgTable('empire_ingest_samples', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
});

const clock = new ManualClock('2026-11-24T12:00:00.000Z');
const DAY = 24 * 3_600_000;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const db = () => t.app.database.db;
const count = async (table: string) => Number(rowsOf<{ n: number }>(await db().execute(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]!.n);
/** One sample row per age, in days before the clock's now. */
async function seedSamples(table: 'ingest_samples' | 'empire_ingest_samples', agesInDays: number[]) {
  for (const age of agesInDays) {
    const at = new Date(clock.now().getTime() - age * DAY).toISOString();
    await db().execute(sql`INSERT INTO ${sql.raw(table)} (received_at, outcome, latency_ms, event_count) VALUES (${at}::timestamptz, 'ok', 1, 1)`);
  }
}

describe('SLO sample retention', () => {
  it('keeps 8 days: the longest SLO window and a day', () => {
    expect(SLO_SAMPLE_RETENTION_MS).toBe(8 * DAY);
  });

  it('deletes in batches until nothing older is left, and only what is older', async () => {
    await seedSamples('empire_ingest_samples', [10, 10, 10, 10, 10, 9, 1]);
    const target = { table: samples, id: samples.id, time: samples.receivedAt };
    expect(await deleteOlderThan(db(), target, new Date(clock.now().getTime() - 9.5 * DAY), 2)).toBe(5);
    expect(await count('empire_ingest_samples')).toBe(2);
    expect(await deleteOlderThan(db(), target, new Date(clock.now().getTime() - 9.5 * DAY), 2)).toBe(0);
    await db().execute(sql`DELETE FROM empire_ingest_samples`);
  });

  it('the honeypot and empire prune jobs delete samples older than 8 days at the run time', async () => {
    await seedSamples('ingest_samples', [30, 8.01, 7.99, 0]);
    await seedSamples('empire_ingest_samples', [8.5, 8.01, 7, 0]);
    expect(await runJob(t, 'ingest-sample-prune')).toEqual({ deleted: 2 });
    expect(await runJob(t, 'empire-sample-prune')).toEqual({ deleted: 2 });
    expect(await count('ingest_samples')).toBe(2);
    expect(await count('empire_ingest_samples')).toBe(2);
    expect(t.app.scheduler.nextRunAt('ingest-sample-prune', clock.now())?.toISOString()).toBe('2026-11-25T03:20:00.000Z');
    expect(t.app.scheduler.nextRunAt('empire-sample-prune', clock.now())?.toISOString()).toBe('2026-11-25T03:25:00.000Z');
  });
});
