import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire, tokenBoundTo } from '../../../../test/helpers/empire.ts';
import { createTenant } from '../../../../test/helpers/honeypot.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';

/**
 * The drift inbox over HTTP on a real database (docs/federation/README.md, "Drift inbox and detectors"):
 * each detector's drift is made through the API (or the owning service), scanned, scanned again
 * (nothing new), acknowledged, cleared at its cause, and auto-resolved by drift-remediate.
 * region-parity needs several deployments: test/federation (three on loopback) makes it drift and
 * clear; detectors.test.ts covers its rules over a stand-in FederationReads.
 */

const clock = new ManualClock('2026-11-28T06:00:00.000Z');
const MINUTE = 60_000;
/** The discard port: nothing listens on it on a test machine, so the peer is unreachable (connection refused). */
const CLOSED_PORT = 9;
const BRIDGE_TOKEN = 'bridge-token-for-drift-tests-0123456789abcdef';
let t: TestApp;

type Event = { id: string; kind: string; source: string; sourceId: string; severity: string; status: string; resolvedBy: string | null; resolutionNotes: string; acknowledgedAt: string | null; resolvedAt: string | null; payload: Record<string, unknown> };
type Scan = { scannedAt: string; openedNow: Event[]; alreadyOpen: number; acceptedWontFix: number; detectorErrors: { detector: string; error: string }[] };

const q = async <T = Record<string, unknown>>(query: ReturnType<typeof sql>) => rowsOf<T>(await t.app.database.db.execute(query));

async function scan(): Promise<Scan> {
  clock.advance(MINUTE);
  const res = await t.call({ method: 'POST', url: `${V1}/trust/drift`, payload: { action: 'auto-open' } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.schema).toBe('svc-trust-drift-auto-open.v1');
  // Every detector answers here; region-parity (the seed registry: this deployment alone) is checked across deployments in the federation test.
  expect(body.detectorErrors.filter((e: { detector: string }) => e.detector !== 'region-parity'), JSON.stringify(body.detectorErrors)).toEqual([]);
  return body;
}

async function remediate(): Promise<{ outcome: string; stats: Record<string, unknown>; errorText: string | null }> {
  clock.advance(MINUTE);
  const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/drift-remediate/run`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  const run = res.json().run;
  if (run.outcome !== 'ok') expect(run.errorText).not.toMatch(/graph-drift \(|replay-drift \(|compliance-fail \(|integrity-mismatch \(/);
  return run;
}

const slotOf = (events: Event[], kind: string, source: string, sourceId: string) => events.filter((e) => e.kind === kind && e.source === source && e.sourceId === sourceId);

async function list(query: Record<string, string> = {}, token?: string) {
  return t.call({ method: 'GET', url: `${V1}/trust/drift`, query, ...(token ? { token } : {}) });
}
async function event(id: string): Promise<Event> {
  const all = (await list({ status: 'all', limit: '500' })).json().events as Event[];
  return all.find((e) => e.id === id)!;
}
const ack = (id: string, payload: object = {}, token?: string) => t.call({ method: 'POST', url: `${V1}/trust/drift/${id}/ack`, payload, ...(token ? { token } : {}) });
const resolve = (id: string, payload: object = {}, token?: string) => t.call({ method: 'POST', url: `${V1}/trust/drift/${id}/resolve`, payload, ...(token ? { token } : {}) });
const facts = (id: string) => q<{ kind: string; action: string; actor: string | null }>(sql`SELECT kind, payload->>'action' AS action, actor FROM audit_facts WHERE source = 'TrustDriftEvent' AND source_id = ${id} ORDER BY seq_no`);
const operatorVerbs = (id: string) => q<{ verb: string; surface: string }>(sql`SELECT verb, surface FROM operator_audit WHERE target = ${`trust-drift:${id}`} ORDER BY seq_no`);

async function override(controlId: string, outcome: 'pass' | 'fail') {
  const res = await t.call({ method: 'POST', url: `${V1}/compliance/override`, payload: { controlId, framework: 'soc2', outcome, note: `drift test: ${outcome}` } });
  expect(res.statusCode, res.body).toBe(200);
}

/** Runs a scan expecting exactly one new event in the slot, and answers it. */
async function opensOne(kind: string, source: string, sourceId: string): Promise<Event> {
  const s = await scan();
  const opened = slotOf(s.openedNow, kind, source, sourceId);
  expect(opened, JSON.stringify(s.openedNow.map((e) => [e.kind, e.source, e.sourceId]))).toHaveLength(1);
  expect(opened[0]).toMatchObject({ status: 'open', acknowledgedAt: null, resolvedAt: null, resolvedBy: null });
  return opened[0]!;
}

async function opensNothingIn(kind: string, source: string, sourceId: string) {
  const s = await scan();
  expect(slotOf(s.openedNow, kind, source, sourceId)).toEqual([]);
  return s;
}

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_BRIDGE_TOKEN: BRIDGE_TOKEN, OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1', OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${CLOSED_PORT}` },
  });
}, 120_000);
afterAll(() => t?.close());

describe('an empty deployment', () => {
  it('lists nothing and opens nothing', async () => {
    const res = await list();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-trust-drift-list.v1', filter: { status: 'open', kind: null, limit: 100, sinceHours: null }, events: [] });
    const s = await scan();
    expect(s).toMatchObject({ openedNow: [], alreadyOpen: 0 });
  });
});

describe('compliance-fail: the lifecycle of a slot', () => {
  let controlId: string;
  let severity: string;
  let first: Event;

  beforeAll(async () => {
    const soc2 = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json();
    const control = soc2.controls.find((c: { predicateKey: string }) => c.predicateKey === 'subprocessors-reviewed');
    controlId = control.controlId;
    severity = control.severity;
  });

  it('opens one event for a failing control, with the control\'s severity, and a drift fact', async () => {
    await override(controlId, 'fail');
    first = await opensOne('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    expect(first.severity).toBe(severity);
    expect(first.payload).toMatchObject({ framework: 'soc2', controlId, predicateKey: 'subprocessors-reviewed' });
    expect(await facts(first.id)).toEqual([{ kind: 'drift', action: 'open', actor: 'admin' }]);
    expect((await q(sql`SELECT verb, surface FROM operator_audit WHERE verb = 'trust.drift-auto-open'`)).length).toBeGreaterThan(0);
  });

  it('opens nothing more on an unchanged system, counting the held slot', async () => {
    const s = await opensNothingIn('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    expect(s.openedNow).toEqual([]);
    expect(s.alreadyOpen).toBeGreaterThanOrEqual(1);
  });

  it('acknowledges; a second ack answers it unchanged; an acknowledged drift that persists does not reopen', async () => {
    const res = await ack(first.id, { notes: 'looking at the vendor list' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-trust-drift-ack.v1', ok: true, event: { id: first.id, status: 'acknowledged', acknowledgedAt: clock.now().toISOString() } });
    const again = await ack(first.id);
    expect(again.statusCode).toBe(200);
    expect(again.json().event.acknowledgedAt).toBe(res.json().event.acknowledgedAt);
    await opensNothingIn('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    expect((await list({ status: 'acknowledged' })).json().events.map((e: Event) => e.id)).toContain(first.id);
    expect(await operatorVerbs(first.id)).toEqual([{ verb: 'trust.drift-ack', surface: 'api' }]);
  });

  it('leaves a still-failing slot alone, and auto-resolves it once the control passes', async () => {
    await remediate();
    expect((await event(first.id)).status).toBe('acknowledged');
    await override(controlId, 'pass');
    const run = await remediate();
    expect(run.stats.autoResolved ?? 0).toBeGreaterThanOrEqual(run.outcome === 'ok' ? 1 : 0);
    const resolved = await event(first.id);
    expect(resolved).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job', resolvedAt: clock.now().toISOString() });
    expect(resolved.resolutionNotes).toContain(`compliance-control soc2:${controlId}`);
    expect((await facts(first.id)).map((f) => f.action)).toEqual(['open', 'ack', 'auto-resolve']);
    expect(await operatorVerbs(first.id)).toEqual([
      { verb: 'trust.drift-ack', surface: 'api' },
      { verb: 'trust.drift-auto-resolve', surface: 'job' },
    ]);
  });

  it('opens a new event when the drift returns; resolves with each status; refuses moves from a final state with 409', async () => {
    await override(controlId, 'fail');
    const statuses = [undefined, 'auto-resolved', 'wont-fix'] as const;
    for (const status of statuses) {
      const e = await opensOne('compliance-fail', 'compliance-control', `soc2:${controlId}`);
      expect(e.id).not.toBe(first.id);
      const res = await resolve(e.id, { ...(status ? { status } : {}), notes: `closing as ${status ?? 'default'}` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ schema: 'svc-trust-drift-resolve.v1', ok: true, event: { status: status ?? 'resolved', resolvedBy: 'admin', resolutionNotes: `closing as ${status ?? 'default'}` } });
      expect((await facts(e.id)).map((f) => f.action)).toEqual(['open', 'resolve']);
      expect(await operatorVerbs(e.id)).toEqual([{ verb: 'trust.drift-resolve', surface: 'api' }]);
      for (const move of [() => resolve(e.id), () => ack(e.id)]) {
        const refused = await move();
        expect(refused.statusCode).toBe(409);
        expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
      }
    }
    // wont-fix accepts the divergence: while it persists, scans open nothing for the slot.
    const accepted = await opensNothingIn('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    expect(accepted.acceptedWontFix).toBeGreaterThanOrEqual(1);
    await remediate();
    await opensNothingIn('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    // Once it clears, the slot is free again: a return is news.
    await override(controlId, 'pass');
    const cleared = await remediate();
    if (cleared.outcome === 'ok') expect(cleared.stats.clearedWontFix).toBeGreaterThanOrEqual(1);
    const stamped = await q<{ cleared_at: Date | null }>(sql`SELECT cleared_at FROM trust_drift_events WHERE status = 'wont-fix' AND source_id = ${`soc2:${controlId}`}`);
    expect(stamped.every((r) => r.cleared_at !== null)).toBe(true);
    await override(controlId, 'fail');
    // An acknowledged event resolves too.
    const e = await opensOne('compliance-fail', 'compliance-control', `soc2:${controlId}`);
    expect((await ack(e.id)).statusCode).toBe(200);
    expect((await resolve(e.id, { status: 'resolved' })).json().event).toMatchObject({ status: 'resolved' });
    await override(controlId, 'pass');
  });

  it('lists by status, kind and age, newest first, and echoes the filter', async () => {
    const all = (await list({ status: 'all', kind: 'compliance-fail', limit: '2' })).json();
    expect(all.filter).toEqual({ status: 'all', kind: 'compliance-fail', limit: 2, sinceHours: null });
    expect(all.events).toHaveLength(2);
    expect(all.events[0].status).toBe('resolved');
    expect((await list({ status: 'wont-fix' })).json().events.every((e: Event) => e.status === 'wont-fix')).toBe(true);
    clock.advance(2 * 3_600_000);
    expect((await list({ status: 'all', sinceHours: '1' })).json()).toMatchObject({ filter: { sinceHours: 1 }, events: [] });
    expect((await list({ status: 'all', sinceHours: '3' })).json().events.length).toBeGreaterThan(0);
  });
});

describe('refusals', () => {
  it('answers 404 for an unknown id and 400 for a bad id, body or query', async () => {
    for (const move of [ack, resolve]) {
      const unknown = await move(randomUUID());
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
      expect((await move('not-a-uuid')).statusCode).toBe(400);
    }
    const [any] = (await list({ status: 'all', limit: '1' })).json().events as Event[];
    expect((await resolve(any!.id, { status: 'open' })).statusCode).toBe(400);
    expect((await ack(any!.id, { notes: 'x'.repeat(2001) })).statusCode).toBe(400);
    expect((await t.call({ method: 'POST', url: `${V1}/trust/drift`, payload: { action: 'close-all' } })).statusCode).toBe(400);
    const bad: Record<string, string>[] = [{ limit: '0' }, { limit: '501' }, { limit: 'ten' }, { sinceHours: '0' }, { sinceHours: '1.5' }, { status: 'closed' }, { kind: 'vibes' }];
    for (const query of bad) {
      const res = await list(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json().schema).toBe('svc-error.v1');
    }
  });

  it('refuses a token bound to toolsets (403) on all four, and a reader on the writes', async () => {
    const bound = await tokenBoundTo(t, ['read:empire', 'write:alerts'], ['crawler-lab']);
    const id = randomUUID();
    for (const res of [
      await list({}, bound),
      await t.call({ method: 'POST', url: `${V1}/trust/drift`, payload: { action: 'auto-open' }, token: bound }),
      await ack(id, {}, bound),
      await resolve(id, {}, bound),
    ]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().human).toContain('spans every toolset');
    }
    const reader = await t.tokenWith(['read:empire']);
    expect((await list({}, reader)).statusCode).toBe(200);
    expect((await ack(id, {}, reader)).statusCode).toBe(403);
  });
});

describe('integrity-mismatch', () => {
  it('opens a critical event for a broken audit chain and clears when a verification finds it intact', async () => {
    const [fact] = await q<{ seqNo: number; payload: unknown }>(sql`SELECT seq_no AS "seqNo", payload FROM audit_facts ORDER BY seq_no LIMIT 1`);
    await q(sql`UPDATE audit_facts SET payload = '{"tampered":true}'::jsonb WHERE seq_no = ${fact!.seqNo}`);
    const verified = await t.call({ method: 'POST', url: `${V1}/audit/chain/verify`, payload: {} });
    expect(verified.json().intact).toBe(false);
    const e = await opensOne('integrity-mismatch', 'audit-chain', 'chain');
    expect(e.severity).toBe('critical');
    await opensNothingIn('integrity-mismatch', 'audit-chain', 'chain');

    // The compliance control that reads open critical drift fails while it is open.
    await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, payload: {} });
    const soc2 = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json();
    const driftControl = soc2.controls.find((c: { predicateKey: string }) => c.predicateKey === 'no-open-critical-drift');
    expect(driftControl.latestOutcome).toBe('fail');
    expect(driftControl.latestSummary).toContain('integrity-mismatch audit-chain chain');

    expect((await ack(e.id)).statusCode).toBe(200);
    await q(sql`UPDATE audit_facts SET payload = ${JSON.stringify(fact!.payload)}::jsonb WHERE seq_no = ${fact!.seqNo}`);
    expect((await t.call({ method: 'POST', url: `${V1}/audit/chain/verify`, payload: {} })).json().intact).toBe(true);
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
    expect((await facts(e.id)).map((f) => f.action)).toEqual(['open', 'ack', 'auto-resolve']);
  });

  it('opens an event for a database whose newest restore verification ended in error, and clears on an ok one', async () => {
    const snap = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(snap.statusCode, snap.body).toBe(200);
    const snapshot = snap.json().snapshot;
    // A record of the same database whose file is gone: its restore fails.
    const broken = randomUUID();
    await q(sql`
      INSERT INTO backup_snapshots (id, database, provider_snapshot_id, storage, format, taken_at, observed_at, retention_until, size_bytes, row_counts_sha256, by_table, table_hashes, file_sha256, source)
      SELECT ${broken}, database, ${`${snapshot.database}/missing-${broken}.pgdump`}, storage, format, taken_at, observed_at, retention_until, size_bytes, row_counts_sha256, by_table, table_hashes, file_sha256, source
        FROM backup_snapshots WHERE id = ${snapshot.id}`);
    clock.advance(MINUTE);
    const failed = await t.call({ method: 'POST', url: `${V1}/backups/verify`, payload: { snapshotId: broken } });
    expect(failed.json().verification.outcome).toBe('error');
    const e = await opensOne('integrity-mismatch', 'restore-verification', snapshot.database);
    expect(e).toMatchObject({ severity: 'major', payload: { outcome: 'error', snapshotId: broken } });
    await opensNothingIn('integrity-mismatch', 'restore-verification', snapshot.database);
    clock.advance(MINUTE);
    const ok = await t.call({ method: 'POST', url: `${V1}/backups/verify`, payload: { snapshotId: snapshot.id } });
    expect(ok.json().verification.outcome, ok.body).toBe('ok');
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
  }, 120_000);

  it('opens an event for a cross-toolset restore row in error, and clears when the row is gone', async () => {
    const port = CLOSED_PORT;
    const registered = await t.call({
      method: 'PUT',
      url: `${V1}/backups/toolsets/peer-lab`,
      payload: { verifyUrl: `http://127.0.0.1:${port}${V1}/backups/bridge/verify`, database: 'peer_lab' },
    });
    expect(registered.statusCode, registered.body).toBe(200);
    const checked = await t.call({ method: 'POST', url: `${V1}/backups/cross-toolset/verify`, payload: {} });
    expect(checked.statusCode, checked.body).toBe(200);
    expect(checked.json().rows.find((r: { toolset: string }) => r.toolset === 'peer-lab')).toMatchObject({ outcome: 'error' });
    const e = await opensOne('integrity-mismatch', 'cross-toolset-restore', 'peer-lab');
    expect(e).toMatchObject({ severity: 'major', payload: { toolset: 'peer-lab', outcome: 'error' } });
    await opensNothingIn('integrity-mismatch', 'cross-toolset-restore', 'peer-lab');
    expect((await t.call({ method: 'DELETE', url: `${V1}/backups/toolsets/peer-lab` })).statusCode).toBe(200);
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
  });
});

describe('graph-drift', () => {
  it('opens nothing before a materialisation, opens when the sources move away from the newest one, clears after the next run', async () => {
    await opensNothingIn('graph-drift', 'graph-materialisation', 'knowledge-graph');
    clock.advance(MINUTE);
    expect((await t.call({ method: 'POST', url: `${V1}/ops/jobs/graph-materialise/run`, payload: {} })).json().run.outcome).toBe('ok');
    await opensNothingIn('graph-drift', 'graph-materialisation', 'knowledge-graph');
    await createTenant(t, 'drift-lab', 'Drift Lab');
    const e = await opensOne('graph-drift', 'graph-materialisation', 'knowledge-graph');
    expect(e.severity).toBe('major');
    expect(JSON.stringify(e.payload.addedNodes)).toContain('drift-lab');
    await opensNothingIn('graph-drift', 'graph-materialisation', 'knowledge-graph');
    expect((await ack(e.id)).statusCode).toBe(200);
    await remediate();
    expect((await event(e.id)).status).toBe('acknowledged');
    clock.advance(2 * MINUTE);
    expect((await t.call({ method: 'POST', url: `${V1}/ops/jobs/graph-materialise/run`, payload: {} })).json().run.outcome).toBe('ok');
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
  });
});

describe('replay-drift', () => {
  it('opens an event per stored event whose replay no longer admits it, and clears when the rule is back', async () => {
    const ingested = await ingestEmpire(t, 'replay-lab', [{ id: 'replay-000001', eventType: 'crawl.started' }]);
    expect(ingested.statusCode, ingested.body).toBe(200);
    const eventId = ingested.json().results[0].eventId as string;
    const slot = `replay-lab:${eventId}`;
    await opensNothingIn('replay-drift', 'empire-event', slot);
    // Signed-only from now on: the stored compatibility-mode event would be refused today.
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/toolsets/replay-lab/policy`, payload: { requireSigned: true } })).statusCode).toBe(200);
    const e = await opensOne('replay-drift', 'empire-event', slot);
    expect(e.payload).toMatchObject({ toolset: 'replay-lab', eventId, fields: [{ field: 'admission', stored: 'compat' }] });
    await opensNothingIn('replay-drift', 'empire-event', slot);
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/toolsets/replay-lab/policy`, payload: { requireSigned: false } })).statusCode).toBe(200);
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
  });

  it('opens an event for a compliance evaluation in force whose stored row no longer replays, and clears on the next evaluation', async () => {
    await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, payload: {} });
    const soc2 = (await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` })).json();
    const control = soc2.controls.find((c: { predicateKey: string; latestEvaluatedBy: string }) => c.predicateKey === 'outbound-private-addresses-blocked' && c.latestEvaluatedBy === 'job');
    await q(sql`UPDATE compliance_evaluations SET summary = 'edited by hand' WHERE id = ${control.latestEvaluationId}`);
    const slot = `soc2:${control.controlId}`;
    const e = await opensOne('replay-drift', 'compliance-evaluation', slot);
    expect(e.payload).toMatchObject({ evaluationId: control.latestEvaluationId, digestMatches: true });
    await opensNothingIn('replay-drift', 'compliance-evaluation', slot);
    clock.advance(MINUTE);
    await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, payload: {} });
    await remediate();
    expect(await event(e.id)).toMatchObject({ status: 'auto-resolved', resolvedBy: 'job' });
  });
});

describe('the jobs', () => {
  it('registers drift-auto-open every 5 minutes and drift-remediate offset by 2, both runnable on demand', async () => {
    const jobs = t.app.trust.jobs();
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([
      ['drift-auto-open', '*/5 * * * *'],
      ['drift-remediate', '2-59/5 * * * *'],
    ]);
    const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/drift-auto-open/run`, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    const run = res.json().run;
    if (run.outcome === 'ok') expect(run.stats).toMatchObject({ openedNow: expect.any(Number), alreadyOpen: expect.any(Number) });
    else expect(run.errorText).toContain('region-parity');
  });

  it('counts open and acknowledged events by severity, and those opened since a time', async () => {
    const counts = await t.app.trust.drift.openDriftCounts();
    const held = [...(await list({ status: 'open', limit: '500' })).json().events, ...(await list({ status: 'acknowledged', limit: '500' })).json().events] as Event[];
    const total = Object.values(counts.open).reduce((a, b) => a + b, 0) + Object.values(counts.acknowledged).reduce((a, b) => a + b, 0);
    expect(total).toBe(held.length);
    expect(await t.app.trust.drift.openedSince(new Date(clock.now().getTime() + MINUTE))).toBe(0);
    expect(await t.app.trust.drift.openedSince(new Date('2026-11-28T00:00:00.000Z'))).toBeGreaterThan(5);
  });
});
