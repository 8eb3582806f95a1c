import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeKeyPair, registerKey } from '../../../../test/helpers/empire.ts';
import { createTenant, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';

/**
 * The compliance evaluation end to end: each control flips with the live state it reads, changed
 * through the API (docs/compliance/README.md, "Controls and predicates"); overrides hold until the
 * automatic outcome changes; replay recomputes from the stored input and notices an edited row;
 * every evaluation is a fact of the audit chain.
 */

const DAY = 86_400_000;
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
let t: TestApp;

type Json = Record<string, any>;

async function ok(method: 'GET' | 'POST', path: string, payload?: unknown, token?: string): Promise<Json> {
  const res = await t.call({ method, url: `${V1}/${path}`, ...(payload === undefined ? {} : { payload: payload as object }), ...(token === undefined ? {} : { token }) });
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
  return res.json();
}

/** Runs the job and answers the outcome in force of each control of both frameworks, by control id. */
async function evaluate(): Promise<Record<string, { outcome: string; summary: string; evaluationId: string; evaluatedBy: string }>> {
  await runJob(t, 'compliance-evaluate');
  return controls();
}

async function controls() {
  const out: Record<string, { outcome: string; summary: string; evaluationId: string; evaluatedBy: string }> = {};
  for (const framework of ['soc2', 'iso27001']) {
    const view = await ok('GET', `compliance/frameworks/${framework}`);
    for (const c of view.controls) out[c.id] = { outcome: c.latestOutcome, summary: c.latestSummary, evaluationId: c.latestEvaluationId, evaluatedBy: c.latestEvaluatedBy };
  }
  return out;
}

const advance = (ms: number) => clock.set(new Date(clock.now().getTime() + ms));

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5' } });
});
afterAll(async () => t?.close());

describe('before the first evaluation', () => {
  it('lists every control with no outcome, and posture is unknown', async () => {
    const view = await ok('GET', 'compliance/frameworks/soc2');
    expect(view.controls.length).toBeGreaterThanOrEqual(10);
    expect(view.controls.every((c: Json) => c.latestOutcome === null && c.latestEvaluationId === null)).toBe(true);
    const posture = await ok('GET', 'compliance/posture');
    expect(posture.frameworks.map((f: Json) => [f.framework, f.badge, f.asOf])).toEqual([
      ['soc2', 'unknown', null],
      ['iso27001', 'unknown', null],
    ]);
  });

  it('answers 404 for an unknown framework and 400 for a malformed one', async () => {
    expect((await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/hipaa` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/NOT_A_KEY` })).statusCode).toBe(400);
  });
});

describe('controls flip with the live state', () => {
  it('evaluates every control; chaos recovery fails, and says chaos is switched off, while no run measured one', async () => {
    const found = await evaluate();
    expect(Object.keys(found)).toHaveLength(26);
    // The pass and the breach are in src/domains/chaos/recovery/recovery.test.ts.
    for (const id of ['soc2/CC7.5', 'iso27001/A.5.29']) {
      expect(found[id]!.outcome, id).toBe('fail');
      expect(found[id]!.summary, id).toMatch(/^No chaos run measured its recovery in the last 90 days\. Chaos is switched off/);
    }
    // The drift inbox is part of the deployment: no critical drift is open on a fresh one.
    for (const id of ['soc2/CC7.1', 'iso27001/A.8.9']) expect(found[id], id).toMatchObject({ outcome: 'pass', summary: 'No critical drift event is open or acknowledged.' });
    // Region parity: a lone region (the seed registry) passes; drift and unreachable regions are in the federation loopback test.
    for (const id of ['soc2/CC9.1', 'iso27001/A.8.14']) {
      expect(found[id]!.outcome, id).toBe('pass');
    }
  });

  it('audit-chain-verified: fails until the chain is verified, passes after, fails again a week later', async () => {
    expect((await evaluate())['soc2/CC7.2']!).toMatchObject({ outcome: 'fail', summary: expect.stringMatching(/never verified/) });
    expect((await ok('POST', 'audit/chain/verify', {})).intact).toBe(true);
    const after = await evaluate();
    expect(after['soc2/CC7.2']!.outcome).toBe('pass');
    expect(after['iso27001/A.8.15']!.outcome).toBe('pass');
    advance(8 * DAY);
    expect((await evaluate())['soc2/CC7.2']!).toMatchObject({ outcome: 'fail', summary: expect.stringMatching(/more than 7 days ago/) });
    await ok('POST', 'audit/chain/verify', {});
  });

  it('restore-verified-7d and failover-drill-90d: fail with nothing recorded, pass after a verification and a drill', async () => {
    const before = await evaluate();
    expect(before['soc2/A1.2']!).toMatchObject({ outcome: 'fail', summary: expect.stringMatching(/No restore verification is recorded/) });
    expect(before['soc2/A1.3']!.outcome).toBe('fail');
    await ok('POST', 'backups/snapshots', {});
    const drill = await ok('POST', 'backups/drills/run', {});
    expect(drill.drill.outcome, JSON.stringify(drill)).toBe('ok');
    const after = await evaluate();
    // The drill restores a snapshot and verifies it: both controls now pass.
    expect(after['soc2/A1.2']!.outcome).toBe('pass');
    expect(after['iso27001/A.8.13']!.outcome).toBe('pass');
    expect(after['soc2/A1.3']!.outcome).toBe('pass');
    expect(after['iso27001/A.5.30']!.outcome).toBe('pass');
    advance(8 * DAY);
    const later = await evaluate();
    expect(later['soc2/A1.2']!.outcome).toBe('fail');
    expect(later['soc2/A1.3']!.outcome).toBe('pass');
  }, 120_000); // a snapshot, a drill and its restore: slow on a shared machine

  it('tokens-expire-or-recently-used: a token idle for 91 days fails the control until it is revoked', async () => {
    const created = await ok('POST', 'tokens', { name: 'forgotten-ci', scopes: ['read:dashboard'] });
    expect((await evaluate())['soc2/CC6.3']!.outcome).toBe('pass');
    advance(91 * DAY);
    await ok('POST', 'audit/chain/verify', {}); // the admin token stays in use
    const idle = await evaluate();
    expect(idle['soc2/CC6.3']!).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('"forgotten-ci"') });
    expect(idle['iso27001/A.5.18']!.outcome).toBe('fail');
    await ok('POST', `tokens/${created.id}/revoke`, {});
    expect((await evaluate())['soc2/CC6.3']!.outcome).toBe('pass');
  });

  it('admin-token-not-first-start: a live first-start token of admin fails the control until it is revoked', async () => {
    expect((await evaluate())['soc2/CC6.1']!.outcome).toBe('pass');
    const firstStart = await ok('POST', 'tokens', { name: 'first-start', scopes: ['read:dashboard'] });
    const found = await evaluate();
    expect(found['soc2/CC6.1']!).toMatchObject({ outcome: 'fail', summary: expect.stringContaining(firstStart.prefix) });
    expect(found['iso27001/A.8.2']!.outcome).toBe('fail');
    await ok('POST', `tokens/${firstStart.id}/revoke`, {});
    expect((await evaluate())['soc2/CC6.1']!.outcome).toBe('pass');
  });

  it('signed-events-required: n/a without keys, fails while a keyed toolset admits unsigned events, passes once it is signed-only', async () => {
    expect((await evaluate())['soc2/PI1.2']!.outcome).toBe('n/a');
    await registerKey(t, 'crawler-lab', nodeKeyPair().publicKeyB64);
    expect((await evaluate())['soc2/PI1.2']!).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('crawler-lab') });
    await ok('POST', 'provenance/toolsets/crawler-lab/policy', { requireSigned: true });
    const after = await evaluate();
    expect(after['soc2/PI1.2']!.outcome).toBe('pass');
    expect(after['iso27001/A.8.24']!.outcome).toBe('pass');
  });

  it('cost-overruns-acknowledged: an open alert at 100% of budget fails the control until it is acknowledged', async () => {
    const day = clock.now().toISOString().slice(0, 10);
    await ok('POST', 'cost/budgets', { scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 10, alertAtPct: [50, 100], destinations: [] });
    await ok('POST', 'cost/records', { records: [{ date: day, toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt', workspace: 'w', region: 'us', amountUsd: 6, units: 1 }] });
    await runJob(t, 'cost-budget-evaluate');
    // 60%: the 50% alert is open, which is not an overrun.
    expect((await evaluate())['soc2/A1.1']!.outcome).toBe('pass');
    await ok('POST', 'cost/records', { records: [{ date: day, toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt', workspace: 'w', region: 'us', amountUsd: 12, units: 2 }] });
    await runJob(t, 'cost-budget-evaluate');
    expect((await evaluate())['soc2/A1.1']!).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('crawler-lab') });
    const open = (await ok('GET', 'cost/alerts?status=open')).alerts as Json[];
    const overrun = open.find((a) => a.thresholdPct === 100)!;
    await ok('POST', `cost/alerts/${overrun.id}/ack`, {});
    expect((await evaluate())['soc2/A1.1']!.outcome).toBe('pass');
  });

  it('triage-incidents-decided: an incident proposal pending for more than 72 hours fails the control until decided', async () => {
    const secret = await createTenant(t, 'shop-eu');
    const events = Array.from({ length: 30 }, () => ({ path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: '203.0.113.50' }));
    const res = await signedIngest(t, { slug: 'shop-eu', secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
    expect(res.statusCode, res.body).toBe(200);
    advance(60_000);
    const run = await ok('POST', 'empire/triage/proposals', {});
    expect(run.proposalCount).toBeGreaterThanOrEqual(1);
    expect((await evaluate())['soc2/CC7.3']!.outcome).toBe('pass');
    advance(73 * 3_600_000);
    await ok('POST', 'audit/chain/verify', {});
    expect((await evaluate())['soc2/CC7.3']!).toMatchObject({ outcome: 'fail', summary: expect.stringMatching(/waited more than 72 hours/) });
    const pending = (await ok('GET', 'empire/triage/proposals?kind=incident&status=pending')).proposals as Json[];
    for (const p of pending) await ok('POST', 'empire/triage/decide', { id: p.id, accept: false, notes: 'seen' });
    expect((await evaluate())['iso27001/A.5.25']!.outcome).toBe('pass');
  });

  it('outbound-private-addresses-blocked: fails on an instance that allows private outbound addresses', async () => {
    expect((await evaluate())['soc2/CC6.6']!.outcome).toBe('pass');
    const lab = await t.secondInstance({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1' });
    const run = await lab.server.inject({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(run.json().run.outcome, run.body).toBe('ok');
    expect((await controls())['soc2/CC6.6']!).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('OBSERVATORY_ALLOW_PRIVATE_OUTBOUND is on') });
  });
});

describe('posture', () => {
  it('counts the outcomes in force and derives the badge from the pass rate over the controls that apply', async () => {
    const found = await evaluate();
    const posture = (await ok('GET', 'compliance/posture')).frameworks as Json[];
    const soc2 = posture.find((f) => f.framework === 'soc2')!;
    const outcomes = Object.entries(found).filter(([id]) => id.startsWith('soc2/')).map(([, c]) => c.outcome);
    const n = (o: string) => outcomes.filter((x) => x === o).length;
    expect(soc2).toMatchObject({ totalControls: outcomes.length, passing: n('pass'), failing: n('fail'), manualReview: n('manual-review'), nA: n('n/a') });
    expect(soc2.ratePct).toBe(Math.round((1000 * n('pass')) / (outcomes.length - n('n/a'))) / 10);
    expect(soc2.asOf).toBe(clock.now().toISOString());
  });
});

describe('overrides', () => {
  it('holds while the automatic outcome stays the one overridden, and ends when it changes', async () => {
    advance(8 * DAY); // the chain verification is now stale: CC7.2 fails
    expect((await evaluate())['soc2/CC7.2']!.outcome).toBe('fail');
    const override = await ok('POST', 'compliance/override', { controlId: 'CC7.2', outcome: 'pass', note: 'Verified offline from the exported chain.', observed: { ticket: 'SEC-42' } });
    const held = await controls();
    expect(held['soc2/CC7.2']).toMatchObject({ outcome: 'pass', evaluationId: override.evaluationId, evaluatedBy: expect.stringMatching(/^operator:/) });
    expect(held['soc2/CC7.2']!.summary).toContain('Verified offline from the exported chain.');
    // The ISO control with the same predicate is not overridden.
    expect(held['iso27001/A.8.15']!.outcome).toBe('fail');
    // Still failing automatically: the override holds through the next evaluation.
    expect((await evaluate())['soc2/CC7.2']).toMatchObject({ outcome: 'pass', evaluationId: override.evaluationId });
    const audit = (await ok('GET', 'honeypot/ops/audit')).rows as Json[];
    expect(audit.some((r) => r.verb === 'compliance.override' && r.target === 'compliance-control:soc2/CC7.2')).toBe(true);
    // The automatic outcome changes (fail → pass): the override ends and the evaluation is in force.
    await ok('POST', 'audit/chain/verify', {});
    const after = await evaluate();
    expect(after['soc2/CC7.2']).toMatchObject({ outcome: 'pass', evaluatedBy: 'job' });
    expect(after['soc2/CC7.2']!.evaluationId).not.toBe(override.evaluationId);
  });

  it('refuses an ambiguous, unknown or malformed override', async () => {
    const post = (payload: object) => t.call({ method: 'POST', url: `${V1}/compliance/override`, payload });
    expect((await post({ controlId: 'CC404', outcome: 'pass', note: 'x' })).statusCode).toBe(404);
    expect((await post({ controlId: 'CC7.2', framework: 'iso27001', outcome: 'pass', note: 'x' })).statusCode).toBe(404);
    const bad = await post({ controlId: 'CC7.2', outcome: 'great', note: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().schema).toBe('svc-error.v1');
    expect((await post({ controlId: 'CC7.2', outcome: 'pass', note: '   ' })).statusCode).toBe(400);
    expect((await post({ controlId: 'CC7.2', outcome: 'pass', note: 'x', observed: { blob: 'x'.repeat(20_000) } })).statusCode).toBe(400);
    const reader = await t.tokenWith(['read:empire']);
    expect((await t.call({ method: 'POST', url: `${V1}/compliance/override`, payload: { controlId: 'CC7.2', outcome: 'pass', note: 'x' }, token: reader })).statusCode).toBe(403);
  });
});

describe('replay and the audit chain', () => {
  it('recomputes a stored evaluation from its observed input, and notices an edited row', async () => {
    const found = await evaluate();
    const id = found['soc2/CC6.6']!.evaluationId;
    const replay = await ok('GET', `compliance/replay/${id}`);
    expect(replay).toMatchObject({ evaluationId: id, framework: 'soc2', controlId: 'CC6.6', storedOutcome: 'pass', replayedOutcome: 'pass', matches: true, digestMatches: true });
    expect(replay.observed).toEqual({ asOf: clock.now().toISOString(), allowPrivateOutbound: false });
    // Someone edits the stored input to read as a lab setting: the digest no longer matches and the replay disagrees.
    await t.app.database.db.execute(sql`UPDATE compliance_evaluations SET observed = jsonb_set(observed, '{allowPrivateOutbound}', 'true') WHERE id = ${id}`);
    const edited = await ok('GET', `compliance/replay/${id}`);
    expect(edited).toMatchObject({ storedOutcome: 'pass', replayedOutcome: 'fail', matches: false, digestMatches: false });
    expect((await t.call({ method: 'GET', url: `${V1}/compliance/replay/00000000-0000-4000-8000-000000000000` })).statusCode).toBe(404);
  });

  it('appends one compliance fact per evaluation, with the observed digest', async () => {
    const found = await evaluate();
    const id = found['iso27001/A.8.20']!.evaluationId;
    const facts = (await ok('GET', 'audit/chain?source=ComplianceEvaluation&limit=26')).facts as Json[];
    expect(facts).toHaveLength(26);
    const fact = facts.find((f) => f.sourceId === id)!;
    expect(fact).toMatchObject({ kind: 'compliance', actor: null });
    const full = await ok('GET', `audit/chain/${fact.id}`);
    const replay = await ok('GET', `compliance/replay/${id}`);
    expect(full.fact.payload).toMatchObject({ framework: 'iso27001', controlId: 'A.8.20', outcome: 'pass', evaluatedBy: 'job', observedSha256: replay.observedSha256 });
  });

  it('is refused to a token bound to toolsets, and to one without read:empire', async () => {
    const bound = (await ok('POST', 'tokens', { name: 'bound', scopes: ['read:empire'], toolsets: ['crawler-lab'] })).token as string;
    for (const url of ['compliance/posture', 'compliance/frameworks/soc2']) {
      expect((await t.call({ method: 'GET', url: `${V1}/${url}`, token: bound })).statusCode).toBe(403);
    }
    const other = await t.tokenWith(['read:dashboard']);
    expect((await t.call({ method: 'GET', url: `${V1}/compliance/posture`, token: other })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/compliance/posture`, token: null })).statusCode).toBe(401);
  });
});
