import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import type { App } from '../../../app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { chaosRuns } from '../schema.ts';

/**
 * The recovery record and the compliance control that reads it (chaos-recovery-within-slo, soc2
 * CC7.5 and iso27001 A.5.29; docs/compliance/README.md): fails while no run measured its recovery in 90
 * days (saying so when chaos is switched off), passes once one ended ok, fails again when the last
 * breached its objective. Runs are written straight to chaos_runs, as the runner would leave them.
 */

const DAY = 86_400_000;
const clock = new ManualClock('2026-11-28T12:00:00.000Z');
let t: TestApp;
/** A second instance on the same database with OBSERVATORY_CHAOS_ALLOW=*: chaos switched on. */
let on: App;
let experimentId = '';

const ago = (ms: number) => new Date(clock.now().getTime() - ms);

/** One run as the runner leaves it: ended at `endedAt` (or open, null) with this outcome. */
async function insertRun(run: { outcome: 'ok' | 'sla-breach' | 'aborted' | 'partial'; endedAt: Date | null; observedRecoverySec?: number | null; recoverySloSec?: number; experiment?: string }) {
  const id = randomUUID();
  const startedAt = new Date((run.endedAt ?? clock.now()).getTime() - 120_000);
  await t.app.database.db.insert(chaosRuns).values({
    id,
    experimentId: run.experiment ?? experimentId,
    kind: 'prisma-readonly-window',
    target: 'primary',
    recoverySloSec: run.recoverySloSec ?? 30,
    trigger: 'manual',
    phase: run.endedAt === null ? 'injected' : 'ended',
    startedAt,
    windowEndsAt: new Date(startedAt.getTime() + 20_000),
    undoneAt: run.endedAt === null ? null : new Date(startedAt.getTime() + 20_000),
    expiresAt: new Date(startedAt.getTime() + 600_000),
    heartbeatAt: startedAt,
    instanceId: 'test',
    endedAt: run.endedAt,
    outcome: run.outcome,
    observedRecoverySec: run.observedRecoverySec ?? null,
    errorText: null,
    abortReason: run.outcome === 'aborted' ? 'chaos was frozen by admin' : null,
    measurements: {},
  });
  return id;
}

type Control = { outcome: string; summary: string; evidenceUrl?: string };

/** Evaluates on `app` and answers the chaos control of both frameworks. */
async function evaluateOn(app: App): Promise<Control[]> {
  // The job runs on the instance's own services (its config included); either instance reads the same rows after.
  if (app === t.app) await runJob(t, 'compliance-evaluate');
  else expect((await app.scheduler.runNow('compliance-evaluate')).outcome).toBe('ok');
  const controls: Control[] = [];
  for (const [framework, id] of [['soc2', 'soc2/CC7.5'], ['iso27001', 'iso27001/A.5.29']] as const) {
    const view = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/${framework}` })).json();
    const control = view.controls.find((c: { id: string }) => c.id === id);
    controls.push({ outcome: control.latestOutcome, summary: control.latestSummary, evidenceUrl: control.latestEvidenceUrl });
  }
  expect(controls[0]!.summary).toBe(controls[1]!.summary);
  return controls;
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  on = await t.secondInstance({ OBSERVATORY_CHAOS_ALLOW: '*' });
  const res = await t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug: 'readonly-drill', kind: 'prisma-readonly-window', target: 'primary' } });
  expect(res.statusCode, res.body).toBe(200);
  experimentId = res.json().experiment.id;
});
afterAll(async () => t?.close());

describe('chaos-recovery-within-slo', () => {
  it('fails with no measured run, saying chaos is switched off when OBSERVATORY_CHAOS_ALLOW is empty', async () => {
    const [control] = await evaluateOn(t.app);
    expect(control!.outcome).toBe('fail');
    expect(control!.summary).toMatch(/^No chaos run measured its recovery in the last 90 days\. Chaos is switched off \(OBSERVATORY_CHAOS_ALLOW is empty\)/);
  });

  it('fails with no measured run while chaos is on, saying how to get one; aborted, partial, open and old runs count for nothing', async () => {
    await insertRun({ outcome: 'aborted', endedAt: ago(DAY) });
    await insertRun({ outcome: 'partial', endedAt: ago(2 * DAY) });
    await insertRun({ outcome: 'ok', endedAt: ago(91 * DAY), observedRecoverySec: 3 });
    await insertRun({ outcome: 'partial', endedAt: null });
    const [control] = await evaluateOn(on);
    expect(control!.outcome).toBe('fail');
    expect(control!.summary).toMatch(/^No chaos run measured its recovery in the last 90 days\. Register an experiment/);
    expect(control!.summary).not.toMatch(/switched off/);
    expect(await t.app.chaos.recovery.recoveryRecord(ago(90 * DAY))).toEqual({ since: ago(90 * DAY).toISOString(), ok: 0, slaBreach: 0, latest: null });
  });

  it('passes once a run in the window ended ok and the last to end did not breach', async () => {
    const breachId = await insertRun({ outcome: 'sla-breach', endedAt: ago(20 * DAY), observedRecoverySec: 95, recoverySloSec: 30 });
    const okId = await insertRun({ outcome: 'ok', endedAt: ago(10 * DAY), observedRecoverySec: 4.26, recoverySloSec: 30 });
    const controls = await evaluateOn(t.app);
    for (const control of controls) {
      expect(control.outcome).toBe('pass');
      expect(control.summary).toBe(
        `1 chaos run ended ok in the last 90 days (1 earlier run breached it). The latest chaos run that measured its recovery (readonly-drill, run ${okId}, ended ${ago(10 * DAY).toISOString()}) recovered in 4.3 s, within its objective of 30 s.`,
      );
      expect(control.evidenceUrl).toMatch(/\/api\/observatory\/v1\/chaos\/runs$/);
    }
    const record = await t.app.chaos.recovery.recoveryRecord(ago(90 * DAY));
    expect(record).toMatchObject({ ok: 1, slaBreach: 1, latest: { id: okId, experimentSlug: 'readonly-drill', outcome: 'ok', observedRecoverySec: 4.26, recoverySloSec: 30 } });
    expect(breachId).not.toBe(okId);
  });

  it('fails when the last run to end breached its objective, naming it and how long it took', async () => {
    const breachId = await insertRun({ outcome: 'sla-breach', endedAt: ago(DAY), observedRecoverySec: 61, recoverySloSec: 30 });
    const [control] = await evaluateOn(t.app);
    expect(control!.outcome).toBe('fail');
    expect(control!.summary).toBe(
      `The latest chaos run that measured its recovery (readonly-drill, run ${breachId}, ended ${ago(DAY).toISOString()}) breached its recovery objective: it recovered in 61 s against an objective of 30 s. 1 run ended ok in the last 90 days.`,
    );
  });

  it('says so of a breach that never recovered, and of a run whose experiment is gone', async () => {
    clock.set(new Date(clock.now().getTime() + 60_000));
    const neverId = await insertRun({ outcome: 'sla-breach', endedAt: ago(1000), observedRecoverySec: null, experiment: randomUUID() });
    const [control] = await evaluateOn(t.app);
    expect(control!.outcome).toBe('fail');
    expect(control!.summary).toContain(`(an experiment since removed, run ${neverId},`);
    expect(control!.summary).toContain('it did not recover within the run\'s bound against an objective of 30 s');
    // An ok run after it passes again.
    clock.set(new Date(clock.now().getTime() + 60_000));
    await insertRun({ outcome: 'ok', endedAt: ago(1000), observedRecoverySec: 2 });
    expect((await evaluateOn(t.app))[0]!.outcome).toBe('pass');
  });
});
