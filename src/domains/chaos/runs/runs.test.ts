import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { trustDriftEvents } from '../../trust/schema.ts';

/**
 * Each kind acts on this service for real and is seen from outside (through HTTP), its window
 * ends, it undoes itself, and the run records the recovery it measured. Time is a manual clock;
 * the runner is stepped by hand (tests run without the scheduler, so nothing steps on its own).
 */

const LATENCY_MS = 400;
const START = '2026-11-28T10:00:30.000Z';

let t: TestApp;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock(START);
  t = await startTestApp({ clock, env: { OBSERVATORY_CHAOS_ALLOW: '*', OBSERVATORY_CHAOS_LATENCY_MS: String(LATENCY_MS) } });
});
afterEach(async () => {
  await t.close();
});

async function register(body: Record<string, unknown>): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().experiment.id;
}

async function runNow(experimentId: string) {
  const res = await t.call({ method: 'POST', url: `${V1}/chaos/experiments/${experimentId}/run`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run;
}

async function runById(id: string) {
  const res = await t.call({ method: 'GET', url: `${V1}/chaos/runs?limit=200` });
  expect(res.statusCode).toBe(200);
  return res.json().runs.find((r: { id: string }) => r.id === id);
}

const step = (ms = 0) => {
  clock.advance(ms);
  return t.app.chaos.runs.runner.step();
};

async function timed(send: () => Promise<{ statusCode: number }>) {
  const began = performance.now();
  const res = await send();
  return { status: res.statusCode, ms: performance.now() - began };
}

describe('synthetic-latency', () => {
  it('delays the targeted routes for the window, undoes itself and records the recovery it measured', async () => {
    const id = await register({ slug: 'healthz-latency', kind: 'synthetic-latency', target: '/healthz' });
    const run = await runNow(id);
    expect(run.phase).toBe('injected');
    expect(run.measurements.inject.duringWindowMs).toBeGreaterThanOrEqual(LATENCY_MS * 0.9);

    const slow = await timed(() => t.call({ method: 'GET', url: '/healthz', token: null }));
    expect(slow.ms).toBeGreaterThanOrEqual(LATENCY_MS * 0.9);
    const other = await timed(() => t.call({ method: 'GET', url: `${V1}/chaos/freeze` }));
    expect(other.ms).toBeLessThan(LATENCY_MS);

    await step(31_000); // the 30 s window is over: undone
    expect((await runById(run.id)).phase).toBe('recovering');
    const fast = await timed(() => t.call({ method: 'GET', url: '/healthz', token: null }));
    expect(fast.ms).toBeLessThan(LATENCY_MS / 2);

    await step(1_500); // the probe is green 1.5 s after the undo
    const ended = await runById(run.id);
    expect(ended).toMatchObject({ phase: 'ended', outcome: 'ok', observedRecoverySec: 1.5, recoverySloSec: 30, errorText: null });
    expect(ended.measurements.probe.afterWindowMs).toBeLessThan(LATENCY_MS / 2);
  });

  it('records sla-breach when recovery is measured past the objective', async () => {
    const id = await register({ slug: 'slow-recovery', kind: 'synthetic-latency', target: '/healthz', recoverySloSec: 5 });
    const run = await runNow(id);
    await step(31_000);
    await step(7_000);
    expect(await runById(run.id)).toMatchObject({ outcome: 'sla-breach', observedRecoverySec: 7 });
  });
});

describe('feature-flag-flip', () => {
  it('turns the bait search off for the window and back on', async () => {
    const search = () => t.call({ method: 'GET', url: '/api/agent?query=dns', token: null });
    expect((await search()).statusCode).not.toBe(503);
    const id = await register({ slug: 'search-off', kind: 'feature-flag-flip', target: 'agent-api-search' });
    const run = await runNow(id);
    expect(run.measurements.inject).toMatchObject({ flag: 'agent-api-search', from: true, to: false });
    const off = await search();
    expect(off.statusCode).toBe(503);
    expect(off.json().schema).toBe('svc-error.v1');

    await step(61_000);
    expect((await search()).statusCode).not.toBe(503);
    await step(200);
    expect(await runById(run.id)).toMatchObject({ phase: 'ended', outcome: 'ok', observedRecoverySec: 0.2 });
  });
});

describe('prisma-readonly-window', () => {
  const write = (n: number) =>
    t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug: `written-${n}`, kind: 'synthetic-latency', target: '/healthz' } });

  it('refuses writes with 503 during the window, keeps reads working, and accepts writes after it', async () => {
    const id = await register({ slug: 'db-read-only', kind: 'prisma-readonly-window', target: 'primary' });
    const run = await runNow(id);
    expect(run.measurements.inject.writeRefusedDuringWindow).toBe(true);

    const refused = await write(1);
    expect(refused.statusCode).toBe(503);
    expect(refused.json().schema).toBe('svc-error.v1');
    expect((await t.call({ method: 'GET', url: `${V1}/chaos/experiments` })).statusCode).toBe(200);

    await step(21_000);
    expect((await write(2)).statusCode).toBe(200);
    await step(300);
    expect(await runById(run.id)).toMatchObject({ phase: 'ended', outcome: 'ok', observedRecoverySec: 0.3 });
    const listed = await t.call({ method: 'GET', url: `${V1}/chaos/experiments` });
    const slugs = listed.json().experiments.map((e: { slug: string }) => e.slug);
    expect(slugs).toContain('written-2');
    expect(slugs).not.toContain('written-1');
  });
});

describe('cron-skip-one', () => {
  it('skips the next scheduled run of the job, records it so, and measures recovery to its next ok run', async () => {
    const id = await register({ slug: 'skip-tarpit-expire', kind: 'cron-skip-one', target: 'tarpit-expire' });
    const run = await runNow(id);
    expect(run.phase).toBe('injected');

    clock.set('2026-11-28T10:01:00.000Z');
    await t.app.scheduler.tick(clock.now());
    const health = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health` });
    // Every per-minute job ran at this fire time: the job's own latest run, not the recent list's first 20.
    const skipped = health.json().latestPerJob.find((j: { job: string }) => j.job === 'tarpit-expire').lastRun;
    expect(skipped).toMatchObject({ outcome: 'skipped' });
    expect(skipped.stats.chaosRunId).toBe(run.id);
    expect((await runById(run.id)).phase).toBe('recovering');

    await step();
    expect((await runById(run.id)).endedAt).toBeNull();

    clock.set('2026-11-28T10:02:00.000Z');
    await t.app.scheduler.tick(clock.now());
    await step(1_000);
    const ended = await runById(run.id);
    expect(ended).toMatchObject({ phase: 'ended', outcome: 'ok', observedRecoverySec: 60 });
    expect(ended.measurements.skipped.fireTime).toBe('2026-11-28T10:01:00.000Z');
  });

  it('ends partial when the job does not come due within the window', async () => {
    const id = await register({ slug: 'skip-never-due', kind: 'cron-skip-one', target: 'tarpit-expire' });
    const run = await runNow(id);
    await step(3_601_000);
    expect(await runById(run.id)).toMatchObject({ phase: 'ended', outcome: 'partial', observedRecoverySec: null });
  });
});

describe('the request example of POST run', () => {
  it('starts a run when sent as is (the experiment id swapped for a registered one)', async () => {
    const endpoint = t.app.endpoints.find((e) => e.id === 'runChaosExperiment')!;
    const body = (endpoint.body as { examples: unknown[] }).examples[0];
    const id = await register({ slug: 'example-run', kind: 'synthetic-latency', target: 'getLlmsTxt' });
    const res = await t.call({ method: 'POST', url: endpoint.path.replace('{id}', id), payload: body as object });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-chaos-run.v1', ok: true, run: { experimentId: id, trigger: 'manual', phase: 'injected', endedAt: null } });
  });
});

describe('the freeze switch', () => {
  it('aborts a run in progress with the reason and undoes its fault', async () => {
    const id = await register({ slug: 'freeze-me', kind: 'synthetic-latency', target: '/healthz' });
    const run = await runNow(id);
    const frozen = await t.call({ method: 'POST', url: `${V1}/chaos/freeze`, payload: { frozen: true, reason: 'incident 42 under way' } });
    expect(frozen.statusCode, frozen.body).toBe(200);
    const ended = await runById(run.id);
    expect(ended).toMatchObject({ phase: 'ended', outcome: 'aborted', observedRecoverySec: null });
    expect(ended.abortReason).toContain('incident 42 under way');
    const fast = await timed(() => t.call({ method: 'GET', url: '/healthz', token: null }));
    expect(fast.ms).toBeLessThan(LATENCY_MS / 2);

    // Frozen: neither a manual run nor the schedule starts anything.
    const refused = await t.call({ method: 'POST', url: `${V1}/chaos/experiments/${id}/run`, payload: {} });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().human).toContain('frozen');
    const job = await t.call({ method: 'POST', url: `${V1}/ops/jobs/chaos-schedule/run` });
    expect(job.json().run.stats).toMatchObject({ started: null, skippedReason: 'frozen' });

    await t.call({ method: 'POST', url: `${V1}/chaos/freeze`, payload: { frozen: false } });
    clock.advance(61 * 60_000); // past the 60-minute default cooldown
    const again = await t.call({ method: 'POST', url: `${V1}/ops/jobs/chaos-schedule/run` });
    expect(again.json().run.stats.started).toMatchObject({ slug: 'freeze-me' });
  });
});

describe('the chaos-schedule job', () => {
  it('starts nothing while chaos is off', async () => {
    const off = await startTestApp({ clock, env: {} });
    try {
      await off.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug: 'x', kind: 'synthetic-latency', target: '/healthz' } });
      const job = await off.call({ method: 'POST', url: `${V1}/ops/jobs/chaos-schedule/run` });
      expect(job.json().run.stats).toMatchObject({ started: null, skippedReason: 'chaos-off' });
    } finally {
      await off.close();
    }
  });

  it('picks the experiment that waited longest, past its cooldown, one run at a time', async () => {
    const first = await register({ slug: 'first', kind: 'feature-flag-flip', target: 'outbound-dispatch', cooldownMinutes: 1 });
    clock.advance(1_000);
    await register({ slug: 'second', kind: 'feature-flag-flip', target: 'agent-api-search', cooldownMinutes: 1 });
    const job = async () => (await t.call({ method: 'POST', url: `${V1}/ops/jobs/chaos-schedule/run` })).json().run.stats;
    expect((await job()).started).toMatchObject({ slug: 'first' });
    expect(await job()).toMatchObject({ started: null, skippedReason: 'run-open' });
    await step(61_000);
    await step(100);
    expect((await job()).started).toMatchObject({ slug: 'second' });
    await step(61_000);
    await step(100);
    clock.advance(60_000);
    const third = await job();
    expect(third.started).toMatchObject({ slug: 'first' });
    const runs = (await t.call({ method: 'GET', url: `${V1}/chaos/runs?experimentId=${first}` })).json().runs;
    expect(runs.map((r: { trigger: string }) => r.trigger)).toEqual(['schedule', 'schedule']);
  });

  it('pauses while a critical drift event is unresolved', async () => {
    await register({ slug: 'drift-paused', kind: 'synthetic-latency', target: '/healthz' });
    const driftId = randomUUID();
    await t.app.database.db.insert(trustDriftEvents).values({
      id: driftId,
      kind: 'graph-drift',
      source: 'graph',
      sourceId: 'test',
      description: 'a critical drift for the test',
      severity: 'critical',
      status: 'open',
      openedAt: clock.now(),
      payload: {},
    });
    const job = async () => (await t.call({ method: 'POST', url: `${V1}/ops/jobs/chaos-schedule/run` })).json().run.stats;
    expect(await job()).toMatchObject({ started: null, skippedReason: 'critical-drift-open' });
    await t.app.database.db.update(trustDriftEvents).set({ status: 'resolved', resolvedAt: clock.now() }).where(eq(trustDriftEvents.id, driftId));
    expect((await job()).started).toMatchObject({ slug: 'drift-paused' });
  });
});

describe('a restart during a run', () => {
  it('leaves nothing injected: the next instance closes the run and writes are accepted', async () => {
    const id = await register({ slug: 'crash-read-only', kind: 'prisma-readonly-window', target: 'primary' });
    const run = await runNow(id);
    // The first instance stops stepping (a crash): its heartbeat is never renewed.
    clock.advance(20_000);
    const next = await t.secondInstance();
    const closed = (await next.server.inject({ method: 'GET', url: `${V1}/chaos/runs`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json().runs[0];
    expect(closed).toMatchObject({ id: run.id, phase: 'ended', outcome: 'partial' });
    expect(closed.errorText).toContain('crash or restart');
    const write = await next.server.inject({
      method: 'POST',
      url: `${V1}/chaos/experiments`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { slug: 'after-crash', kind: 'synthetic-latency', target: '/healthz' },
    });
    expect(write.statusCode, write.body).toBe(200);
  });
});
