import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { createForecaster, type Forecaster, forecastJobs, STUB_RUN_ID } from './service.ts';

// The forecaster run against a database (docs/empire/README.md, "Forecasts"): hourly buckets of the 7 days
// before the current hour, one stored score per toolset per run, and the latch that opens one minor
// incident on the third consecutive run above 0.7 and none while that incident is open.

const HOUR = 3_600_000;
/** Runs at 12:10; the window is the 168 whole hours before 12:00. */
const clock = new ManualClock('2026-11-24T12:10:00.000Z');
const WINDOW_END = Date.parse('2026-11-24T12:00:00.000Z');
const WINDOW_START = WINDOW_END - 168 * HOUR;

let testDb: TestDatabase;
let database: Database;
let forecaster: Forecaster;

/**
 * `baseline` events in each of the 165 oldest hours of the window and `recent` in each of its last
 * 3 (event k of an hour at k seconds past it), stored directly: the forecaster reads the table.
 */
async function seed(toolset: string, baseline: number, recent: number) {
  await database.db.execute(sql`
    INSERT INTO empire_events (event_id, toolset, sender_id, event_type, ts, payload, event_hash, compat_mode, schema_version, received_at, body_bytes)
    SELECT gen_random_uuid(), ${toolset}, ${toolset} || '-' || h || '-' || k, 'tick',
      ${new Date(WINDOW_START).toISOString()}::timestamptz + h * interval '1 hour' + k * interval '1 second',
      '{}'::jsonb, 'hash', true, 1, ${new Date(WINDOW_END).toISOString()}::timestamptz, 10
    FROM generate_series(0, 167) AS h
    CROSS JOIN LATERAL generate_series(1, CASE WHEN h >= 165 THEN ${recent}::int ELSE ${baseline}::int END) AS k`);
}

/** Leaves `perHour` events in each of the last 3 hours of the window (ends a surge). */
async function trimRecent(toolset: string, perHour: number) {
  await database.db.execute(sql`
    DELETE FROM empire_events WHERE toolset = ${toolset} AND ts >= ${new Date(WINDOW_END - 3 * HOUR).toISOString()}::timestamptz
      AND extract(second FROM ts) > ${perHour}`);
}

type IncidentRow = { id: string; toolset: string; severity: string; title: string; status: string; source: string; event_ids: string[]; details: Record<string, unknown>; opened_at: unknown; resolved_at: unknown };
const incidents = async (toolset: string) =>
  rowsOf<IncidentRow>(await database.db.execute(sql`SELECT * FROM empire_incidents WHERE toolset = ${toolset} ORDER BY opened_at, id`));
const forecastRows = async (runId: string) =>
  rowsOf<{ id: string; toolset: string; score: number; level: string; direction: string; details: Record<string, unknown>; computed_at: unknown }>(
    await database.db.execute(sql`SELECT id, toolset, score, level, direction, details, computed_at FROM empire_forecasts WHERE run_id = ${runId} ORDER BY toolset`),
  ).map((r) => ({ ...r, score: Number(r.score) }));

/** One forecaster run a minute after the previous one (all within the same hour, so the window stays put). */
async function nextRun() {
  clock.advance(60_000);
  return forecaster.run(clock.now());
}

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  forecaster = createForecaster({ db: database.db, clock });
  await seed('calm-lab', 4, 4);
  // 4 an hour, then 20 an hour: z = 16 / 2 = 8, score ≈ 0.93 (an alert), a surge.
  await seed('surge-lab', 4, 20);
  // 100 an hour, then none: z = 100 / 10 = 10, score ≈ 0.96, a silence.
  await seed('quiet-lab', 100, 0);
  // 4 an hour, then 20 an hour; its surge ends after two runs.
  await seed('blip-lab', 4, 20);
  // Starting PGlite on a busy machine (mutation runs beside other work) can take long.
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});

describe('a forecaster run', () => {
  it('passes stub runs through without writing anything', async () => {
    // The fixed run id docs/empire/README.md names.
    expect(STUB_RUN_ID).toBe('00000000-0000-4000-8000-000000000000');
    expect(await forecaster.run(clock.now(), true)).toEqual({ ok: true, runId: STUB_RUN_ID, forecastsCreated: 0, latchedIncidentIds: [] });
    expect(rowsOf(await database.db.execute(sql`SELECT id FROM empire_forecasts`))).toEqual([]);
  });

  it('scores each toolset with events from the 168 whole hours before the current hour, and stores the scores', async () => {
    // An event after the window's end (this hour, still filling) and one before its start are not counted.
    await database.db.execute(sql`
      INSERT INTO empire_events (event_id, toolset, sender_id, event_type, ts, payload, event_hash, compat_mode, schema_version, received_at, body_bytes)
      VALUES (gen_random_uuid(), 'calm-lab', 'calm-now', 'tick', ${new Date(WINDOW_END + 60_000).toISOString()}::timestamptz, '{}'::jsonb, 'h', true, 1, now(), 10),
             (gen_random_uuid(), 'calm-lab', 'calm-old', 'tick', ${new Date(WINDOW_START - 1).toISOString()}::timestamptz, '{}'::jsonb, 'h', true, 1, now(), 10),
             (gen_random_uuid(), 'old-lab', 'old-1', 'tick', ${new Date(WINDOW_START - 1).toISOString()}::timestamptz, '{}'::jsonb, 'h', true, 1, now(), 10)`);
    const result = await forecaster.run(clock.now());
    expect(result).toMatchObject({ ok: true, forecastsCreated: 4, latchedIncidentIds: [] });
    expect(result.runId).not.toBe(STUB_RUN_ID);
    const rows = await forecastRows(result.runId);
    expect(rows.map((r) => r.toolset)).toEqual(['blip-lab', 'calm-lab', 'quiet-lab', 'surge-lab']);
    const byToolset = new Map(rows.map((r) => [r.toolset, r]));
    expect(byToolset.get('calm-lab')).toMatchObject({ score: 0, level: 'none', direction: 'steady' });
    expect(byToolset.get('calm-lab')!.details).toEqual({
      z: 0,
      recentMean: 4,
      baselineMean: 4,
      scale: 2,
      windowStart: new Date(WINDOW_START).toISOString(),
      windowEnd: new Date(WINDOW_END).toISOString(),
    });
    expect(new Date(String(byToolset.get('calm-lab')!.computed_at)).toISOString()).toBe(clock.now().toISOString());
    expect(byToolset.get('surge-lab')).toMatchObject({ level: 'alert', direction: 'surge' });
    expect(byToolset.get('surge-lab')!.score).toBeCloseTo(1 - Math.exp(-8 / 3), 4);
    expect(byToolset.get('quiet-lab')).toMatchObject({ level: 'alert', direction: 'silence' });
  });

  it('counts events per toolset and hour of the window, of the toolsets in reach', async () => {
    const all = await forecaster.hourlyCounts(new Date(WINDOW_START), new Date(WINDOW_END));
    expect([...new Set(all.map((c) => c.toolset))].sort()).toEqual(['blip-lab', 'calm-lab', 'quiet-lab', 'surge-lab']);
    const calm = await forecaster.hourlyCounts(new Date(WINDOW_START), new Date(WINDOW_END), ['calm-lab']);
    expect(calm).toHaveLength(168);
    expect(calm.every((c) => c.toolset === 'calm-lab' && c.count === 4 && c.hour >= 0 && c.hour < 168)).toBe(true);
    expect(await forecaster.hourlyCounts(new Date(WINDOW_START), new Date(WINDOW_END), [])).toEqual([]);
  });

  it('answers the latest forecast of every toolset', async () => {
    const { forecasts } = await forecaster.latest();
    expect(forecasts.map((f) => f.toolset)).toEqual(['blip-lab', 'calm-lab', 'quiet-lab', 'surge-lab']);
    const surge = forecasts.find((f) => f.toolset === 'surge-lab')!;
    expect(surge).toMatchObject({ level: 'alert', direction: 'surge', recentMean: 20, baselineMean: 4, computedAt: clock.now().toISOString() });
    expect(surge.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(surge.score).toBeCloseTo(1 - Math.exp(-8 / 3), 4);
  });

  it('is as of the end of the newest run\'s window, or says why there is none', async () => {
    expect((await forecaster.latest()).freshness).toMatchObject({ asOf: new Date(WINDOW_END).toISOString(), producer: 'forecast', reason: null });
    const none = await forecaster.latest({ toolsets: new Set(['unscored-lab']) });
    expect(none.forecasts).toEqual([]);
    expect(none.freshness).toMatchObject({
      asOf: null,
      reason: 'No forecast yet: the forecast job scores every toolset with events in the last 7 days, over complete hours.',
    });
  });
});

describe('the latch', () => {
  it('opens nothing on the first two alert runs and one minor incident on the third', async () => {
    // The run above was the first; this is the second.
    const second = await nextRun();
    expect(second.latchedIncidentIds).toEqual([]);
    expect(await incidents('surge-lab')).toEqual([]);
    await trimRecent('blip-lab', 4);
    const third = await nextRun();
    expect(third.latchedIncidentIds).toHaveLength(2);
    const [quiet] = await incidents('quiet-lab');
    const [surge] = await incidents('surge-lab');
    // Toolsets in name order.
    expect(third.latchedIncidentIds).toEqual([quiet!.id, surge!.id]);
    expect(surge).toMatchObject({ toolset: 'surge-lab', severity: 'minor', status: 'open', source: 'forecast', title: 'Forecast: surge-lab event rate surged (score 0.93 on 3 runs)' });
    expect(quiet!.title).toBe('Forecast: quiet-lab event rate fell silent (score 0.96 on 3 runs)');
    expect(new Date(String(surge!.opened_at)).toISOString()).toBe(clock.now().toISOString());
    expect(surge!.resolved_at).toBeNull();
    expect(surge!.details).toMatchObject({ runId: third.runId, recentMean: 20, baselineMean: 4, z: 8 });
    const [forecast] = (await forecastRows(third.runId)).filter((r) => r.toolset === 'surge-lab');
    expect(surge!.details.forecastId).toBe(forecast!.id);
    // The newest 20 events of the last 3 hours, as evidence.
    const newest = rowsOf<{ event_id: string }>(
      await database.db.execute(sql`SELECT event_id FROM empire_events WHERE toolset = 'surge-lab' ORDER BY ts DESC, event_id DESC LIMIT 20`),
    );
    expect(surge!.event_ids).toEqual(newest.map((r) => r.event_id));
    // quiet-lab had no event in its last 3 hours: no evidence.
    expect(quiet!.event_ids).toEqual([]);
    // blip-lab's streak ended on this run: no incident.
    expect(await incidents('blip-lab')).toEqual([]);
  });

  it('opens nothing more while the streak goes on', async () => {
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    expect(await incidents('surge-lab')).toHaveLength(1);
  });

  it('opens nothing for a new streak while the forecast incident is still open (acknowledged counts as open)', async () => {
    await database.db.execute(sql`UPDATE empire_incidents SET status = 'acknowledged' WHERE toolset = 'surge-lab'`);
    await trimRecent('surge-lab', 4);
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    await seedRecentAgain('surge-lab');
    for (let run = 0; run < 3; run++) expect((await nextRun()).latchedIncidentIds).toEqual([]);
    expect(await incidents('surge-lab')).toHaveLength(1);
  });

  it('opens a new incident on the third run of a new streak once the old one is resolved', async () => {
    await database.db.execute(sql`UPDATE empire_incidents SET status = 'resolved', resolved_at = now() WHERE toolset = 'surge-lab'`);
    await trimRecent('surge-lab', 4);
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    await seedRecentAgain('surge-lab');
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    expect((await nextRun()).latchedIncidentIds).toEqual([]);
    const third = await nextRun();
    expect(third.latchedIncidentIds).toHaveLength(1);
    const all = await incidents('surge-lab');
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ id: third.latchedIncidentIds[0], status: 'open' });
  });
});

/** Puts a toolset's last 3 hours back to 20 events each (after trimRecent). */
async function seedRecentAgain(toolset: string) {
  await database.db.execute(sql`
    INSERT INTO empire_events (event_id, toolset, sender_id, event_type, ts, payload, event_hash, compat_mode, schema_version, received_at, body_bytes)
    SELECT gen_random_uuid(), ${toolset}, ${toolset} || '-again-' || gen_random_uuid(), 'tick',
      ${new Date(WINDOW_START).toISOString()}::timestamptz + h * interval '1 hour' + k * interval '1 second',
      '{}'::jsonb, 'hash', true, 1, ${new Date(WINDOW_END).toISOString()}::timestamptz, 10
    FROM generate_series(165, 167) AS h
    CROSS JOIN LATERAL generate_series(1, 20) AS k
    WHERE NOT EXISTS (SELECT 1 FROM empire_events e WHERE e.toolset = ${toolset}
      AND e.ts = ${new Date(WINDOW_START).toISOString()}::timestamptz + h * interval '1 hour' + k * interval '1 second')`);
}

describe('the forecast job', () => {
  const ctx = () => ({ now: clock.now(), db: database.db, log: pino({ level: 'silent' }), trigger: 'manual' as const });
  const forecastCount = async () => rowsOf(await database.db.execute(sql`SELECT id FROM empire_forecasts`)).length;

  it('runs the forecaster every 15 minutes, described', async () => {
    const jobs = forecastJobs(forecaster);
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([['forecast', '*/15 * * * *']]);
    expect(jobs[0]!.description.length).toBeGreaterThan(20);
    const forecastStats = await jobs[0]!.run(ctx());
    expect(forecastStats).toMatchObject({ forecastsCreated: 4, latchedIncidents: 0 });
    expect((forecastStats as { runId: string }).runId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('waits while the model budget defers the forecaster, naming the bucket, and runs nothing', async () => {
    const asked: unknown[][] = [];
    const [job] = forecastJobs(forecaster, {
      deferral: async (...args) => (asked.push(args), { bucket: { month: '2026-11', toolset: '*' } }),
    });
    const before = await forecastCount();
    expect(await job!.run(ctx())).toEqual({ deferred: 'the 2026-11 model budget of bucket * is spent or degraded' });
    expect(asked).toEqual([['forecaster', '*', clock.now()]]);
    expect(await forecastCount()).toBe(before);
    // A budget that defers nothing lets the run through.
    const [free] = forecastJobs(forecaster, { deferral: async () => null });
    expect(await free!.run(ctx())).toMatchObject({ forecastsCreated: 4 });
  });
});
