import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.ts';
import type { Database } from '../db/client.ts';
import { createMetrics } from '../metrics.ts';
import { openTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { listRecentRuns } from './repository.ts';
import type { BeforeScheduledRun } from '../faults/index.ts';
import { createScheduler, type JobDefinition } from './scheduler.ts';

let testDb: TestDatabase;
let dbA: Database;
let dbB: Database;
beforeAll(async () => {
  ({ testDb, database: dbA } = await openTestDatabase());
  dbB = await testDb.open();
});
afterAll(() => testDb.drop());

function schedulerFor(database: Database, clock: ManualClock, jobs: JobDefinition[], hooks: { beforeScheduledRun?: BeforeScheduledRun; beforeRunTimeoutMs?: number } = {}) {
  return createScheduler({ db: database.db, clock, log: pino({ level: 'silent' }), metrics: createMetrics(() => database.poolStats()), jobs, ...hooks });
}

describe('scheduler', () => {
  it('runs each fire time once, at the cron time in UTC, passing the fire time as the clock', async () => {
    const seen: string[] = [];
    const job: JobDefinition = {
      name: 'quarter-hour',
      description: 'test',
      schedule: '*/15 * * * *',
      run: async ({ now }) => {
        seen.push(now.toISOString());
        return { counted: seen.length };
      },
    };
    const clock = new ManualClock('2026-11-23T10:07:00.000Z');
    const scheduler = schedulerFor(dbA, clock, [job]);
    expect((await scheduler.tick()).map((r) => r.scheduledFor)).toEqual(['2026-11-23T10:00:00.000Z']);
    clock.set('2026-11-23T10:14:59.000Z');
    expect(await scheduler.tick()).toEqual([]);
    clock.set('2026-11-23T10:15:00.000Z');
    const [run] = await scheduler.tick();
    expect(run).toMatchObject({ job: 'quarter-hour', trigger: 'schedule', outcome: 'ok', scheduledFor: '2026-11-23T10:15:00.000Z', stats: { counted: 2 }, errorText: null });
    expect(seen).toEqual(['2026-11-23T10:00:00.000Z', '2026-11-23T10:15:00.000Z']);
    expect(scheduler.nextRunAt('quarter-hour', clock.now())?.toISOString()).toBe('2026-11-23T10:30:00.000Z');
  });

  it('runs a fire time once when two instances tick together', async () => {
    let runs = 0;
    const job: JobDefinition = {
      name: 'shared-hourly',
      description: 'test',
      schedule: '0 * * * *',
      run: async () => {
        runs += 1;
        return {};
      },
    };
    const clock = new ManualClock('2026-11-23T11:00:30.000Z');
    const a = schedulerFor(dbA, clock, [job]);
    const b = schedulerFor(dbB, clock, [job]);
    const results = await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
    expect(results.flat()).toHaveLength(1);
    expect(runs).toBe(1);
    const recorded = (await listRecentRuns(dbA.db, 100)).filter((r) => r.job === 'shared-hourly');
    expect(recorded).toHaveLength(1);
  });

  it('records a failing run with its error text and does not throw', async () => {
    const clock = new ManualClock('2026-11-23T12:00:00.000Z');
    const scheduler = schedulerFor(dbA, clock, [
      { name: 'broken', description: 'test', schedule: null, run: async () => Promise.reject(new Error('upstream said no')) },
    ]);
    const run = await scheduler.runNow('broken');
    expect(run).toMatchObject({ job: 'broken', trigger: 'manual', outcome: 'error', errorText: 'upstream said no', scheduledFor: null });
    expect(run.finishedAt).not.toBeNull();
    const [stored] = (await listRecentRuns(dbA.db, 100)).filter((r) => r.id === run.id);
    expect(stored).toMatchObject({ outcome: 'error', errorText: 'upstream said no' });
  });

  it('catches up a missed fire time within a day, and skips older ones', async () => {
    const job: JobDefinition = { name: 'weekly', description: 'test', schedule: '0 4 * * 1', run: async () => ({}) };
    // Monday 2026-11-23 04:00 was missed; at 20:00 the same day it is caught up once.
    const clock = new ManualClock('2026-11-23T20:00:00.000Z');
    const scheduler = schedulerFor(dbA, clock, [job]);
    expect((await scheduler.tick()).map((r) => r.scheduledFor)).toEqual(['2026-11-23T04:00:00.000Z']);
    clock.set('2026-11-25T20:00:00.000Z');
    expect(await scheduler.tick()).toEqual([]);
    const late = schedulerFor(dbA, new ManualClock('2026-12-02T20:00:00.000Z'), [{ ...job, name: 'weekly-late' }]);
    expect((await late.tick(new Date('2026-12-02T20:00:00.000Z')))).toEqual([]);
  });

  it('counts runs in the metrics', async () => {
    const clock = new ManualClock('2026-11-23T13:00:00.000Z');
    const metrics = createMetrics(() => dbA.poolStats());
    const scheduler = createScheduler({
      db: dbA.db,
      clock,
      log: pino({ level: 'silent' }),
      metrics,
      jobs: [{ name: 'metered', description: 'test', schedule: null, run: async () => ({}) }],
    });
    await scheduler.runNow('metered');
    await scheduler.runNow('metered');
    expect(await metrics.registry.metrics()).toContain('observatory_job_runs_total{job="metered",outcome="ok"} 2');
  });
});

describe('skipping a scheduled run (the before-run hook)', () => {
  function countingJob(name: string) {
    const seen: string[] = [];
    const job: JobDefinition = {
      name,
      description: 'test',
      schedule: '*/15 * * * *',
      run: async ({ now }) => {
        seen.push(now.toISOString());
        return { counted: seen.length };
      },
    };
    return { job, seen };
  }

  it('records a skipped run with the decision\'s stats and reason, without running the job; the next fire time runs', async () => {
    const { job, seen } = countingJob('skip-once');
    const asked: [string, string][] = [];
    let skipsLeft = 1;
    const hook: BeforeScheduledRun = async (name, fireTime) => {
      asked.push([name, fireTime.toISOString()]);
      if (skipsLeft === 0) return { skip: false };
      skipsLeft -= 1;
      return { skip: true, reason: 'chaos experiment cron-skip-one', stats: { chaosRunId: 'run-7' } };
    };
    const clock = new ManualClock('2026-11-24T10:00:00.000Z');
    const scheduler = schedulerFor(dbA, clock, [job], { beforeScheduledRun: hook });

    const [skipped] = await scheduler.tick(clock.now());
    expect(skipped).toMatchObject({
      job: 'skip-once',
      trigger: 'schedule',
      scheduledFor: '2026-11-24T10:00:00.000Z',
      outcome: 'skipped',
      stats: { chaosRunId: 'run-7', reason: 'chaos experiment cron-skip-one' },
      errorText: null,
    });
    expect(skipped!.finishedAt).not.toBeNull();
    expect(skipped!.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual([]);
    const [stored] = (await listRecentRuns(dbA.db, 100)).filter((r) => r.id === skipped!.id);
    expect(stored).toMatchObject({ outcome: 'skipped', stats: { chaosRunId: 'run-7', reason: 'chaos experiment cron-skip-one' }, errorText: null });
    expect(stored!.finishedAt).not.toBeNull();
    // The skipped fire time is done: ticking again does not run it after all.
    expect(await scheduler.tick(clock.now())).toEqual([]);

    clock.set('2026-11-24T10:15:00.000Z');
    const [next] = await scheduler.tick(clock.now());
    expect(next).toMatchObject({ outcome: 'ok', scheduledFor: '2026-11-24T10:15:00.000Z', stats: { counted: 1 } });
    expect(seen).toEqual(['2026-11-24T10:15:00.000Z']);
    expect(asked).toEqual([
      ['skip-once', '2026-11-24T10:00:00.000Z'],
      ['skip-once', '2026-11-24T10:15:00.000Z'],
    ]);
  });

  it('never asks about an on-demand run', async () => {
    const { job, seen } = countingJob('skip-never-manual');
    let asked = 0;
    const scheduler = schedulerFor(dbA, new ManualClock('2026-11-24T11:05:00.000Z'), [job], {
      beforeScheduledRun: async () => {
        asked += 1;
        return { skip: true, reason: 'skip everything', stats: {} };
      },
    });
    const run = await scheduler.runNow('skip-never-manual');
    expect(run).toMatchObject({ trigger: 'manual', outcome: 'ok', stats: { counted: 1 } });
    expect(seen).toHaveLength(1);
    expect(asked).toBe(0);
  });

  it('asks once per fire time when two instances tick together: only the one that claimed it decides', async () => {
    const { job, seen } = countingJob('skip-shared');
    let asked = 0;
    const hook: BeforeScheduledRun = async () => {
      asked += 1;
      return { skip: true, reason: 'once', stats: {} };
    };
    const clock = new ManualClock('2026-11-24T12:00:00.000Z');
    const a = schedulerFor(dbA, clock, [job], { beforeScheduledRun: hook });
    const b = schedulerFor(dbB, clock, [job], { beforeScheduledRun: hook });
    const runs = (await Promise.all([a.tick(), b.tick(), a.tick()])).flat();
    expect(runs.map((r) => r.outcome)).toEqual(['skipped']);
    expect(asked).toBe(1);
    expect(seen).toEqual([]);
  });

  it('runs the job as usual when the hook throws, or does not answer in time', async () => {
    const { job: throwing, seen: seenThrowing } = countingJob('skip-hook-throws');
    const clock = new ManualClock('2026-11-24T13:00:00.000Z');
    const broken = schedulerFor(dbA, clock, [throwing], {
      beforeScheduledRun: async () => {
        throw new Error('chaos domain broken');
      },
    });
    const [run] = await broken.tick(clock.now());
    expect(run).toMatchObject({ outcome: 'ok', stats: { counted: 1 }, errorText: null });
    expect(seenThrowing).toHaveLength(1);

    const { job: silent, seen: seenSilent } = countingJob('skip-hook-hangs');
    const hanging = schedulerFor(dbA, clock, [silent], { beforeScheduledRun: () => new Promise(() => {}), beforeRunTimeoutMs: 50 });
    const [late] = await hanging.tick(clock.now());
    expect(late).toMatchObject({ outcome: 'ok', stats: { counted: 1 } });
    expect(seenSilent).toHaveLength(1);
  });

  it('counts skipped runs in the metrics', async () => {
    const clock = new ManualClock('2026-11-24T14:00:00.000Z');
    const metrics = createMetrics(() => dbA.poolStats());
    const scheduler = createScheduler({
      db: dbA.db,
      clock,
      log: pino({ level: 'silent' }),
      metrics,
      jobs: [countingJob('skip-metered').job],
      beforeScheduledRun: async () => ({ skip: true, reason: 'metered', stats: {} }),
    });
    await scheduler.tick(clock.now());
    expect(await metrics.registry.metrics()).toContain('observatory_job_runs_total{job="skip-metered",outcome="skipped"} 1');
  });
});
