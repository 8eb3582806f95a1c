import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { FederationReads, RegionDigestFanOut } from '../../federation/index.ts';
import { type DimensionKey, scoreOf, SNAPSHOT_RULES, type SnapshotBadge } from './score.ts';
import { createTrustSnapshotService } from './service.ts';

/**
 * GET {v1}/trust/snapshot end to end on a real database (docs/trust/README.md, "Trust snapshot"): an empty
 * instance answers unknown where it has no evidence and says so; each dimension then moves with the
 * live state, changed through the API or the owning domain's service, and the score follows its
 * arithmetic. The drift inbox's API is not part of this branch: drift events are inserted as rows.
 */

const HOUR = 3_600_000;
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
let t: TestApp;
type Json = Record<string, any>;

const exec = async <T = Record<string, unknown>>(query: ReturnType<typeof sql>) => rowsOf<T>(await t.app.database.db.execute(query));

async function snapshot(): Promise<Json> {
  const res = await t.call({ method: 'GET', url: `${V1}/trust/snapshot` });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.schema).toBe('svc-trust-snapshot.v1');
  // The score is the arithmetic of the dimension badges, whatever they are.
  const badges = Object.fromEntries(body.dimensions.map((d: Json) => [d.key, d.badge])) as Record<DimensionKey, SnapshotBadge>;
  const { coveragePct: _, ...expected } = scoreOf(badges);
  expect(body.score).toEqual(expected);
  return body;
}

const dim = (s: Json, key: string): Json => s.dimensions.find((d: Json) => d.key === key);

async function ok(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<Json> {
  const res = await t.call({ method, url: `${V1}/${path}`, ...(payload === undefined ? {} : { payload: payload as object }) });
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
  return res.json();
}

beforeAll(async () => {
  t = await startTestApp({ clock });
}, 120_000);
afterAll(async () => t?.close());

describe('an empty instance', () => {
  it('answers unknown where it has no evidence, with summaries that say so, and writes nothing', async () => {
    const [head] = await exec<{ seq_no: string }>(sql`SELECT seq_no FROM audit_chain_head`);
    const [audits] = await exec<{ n: number }>(sql`SELECT count(*)::int AS n FROM operator_audit`);
    const s = await snapshot();
    expect(s.dimensions.map((d: Json) => d.key)).toEqual(['audit', 'drift', 'freshness', 'incidents', 'integrity', 'posture']);
    expect(Object.fromEntries(s.dimensions.map((d: Json) => [d.key, d.badge]))).toEqual({
      audit: 'unknown',
      drift: 'green',
      freshness: 'unknown',
      incidents: 'green',
      // The seed registry is this deployment alone: its migration parity is matched, the only integrity evidence (partial, so yellow).
      integrity: 'yellow',
      posture: 'unknown',
    });
    expect(dim(s, 'audit').summary).toMatch(/never verified/);
    expect(dim(s, 'posture').summary).toMatch(/never evaluated/);
    expect(dim(s, 'freshness').summary).toMatch(/never materialised.*not rolled.*No backup was ever restored/);
    expect(dim(s, 'integrity').summary).toMatch(/never verified.*No restore verification/);
    expect(s.numbers).toEqual({
      postureGreen: 0,
      postureFailing: 0,
      federationDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      migrationParity: 'matched',
      graphLagSec: null,
      openIncidents: 0,
      recentAudits24h: Number(audits!.n), // the start-up's own records
      driftEvents24h: 0,
    });
    // Only incidents, drift (green) and integrity (yellow) are known (50 of 100): the score's badge and the overall badge are unknown.
    expect(s.score).toMatchObject({ score: 70, badge: 'unknown' });
    expect(s.overallBadge).toBe('unknown');
    for (const d of s.dimensions) {
      expect(d.drillIn, d.key).toMatch(/^\/[a-z/-]+$/);
      expect(d.apiDrillIn, d.key).toMatch(new RegExp(`^${V1}/`));
    }
    const [after] = await exec<{ seq_no: string }>(sql`SELECT seq_no FROM audit_chain_head`);
    expect(after?.seq_no ?? null).toEqual(head?.seq_no ?? null);
  });

  it('refuses a token bound to toolsets (403), and one without read:empire', async () => {
    const created = await ok('POST', 'tokens', { name: 'bound', scopes: ['read:empire'], toolsets: ['crawler-lab'] });
    const bound = await t.call({ method: 'GET', url: `${V1}/trust/snapshot`, token: created.token });
    expect(bound.statusCode).toBe(403);
    expect(bound.json().human).toMatch(/spans every toolset/);
    const narrow = await t.tokenWith(['read:dashboard']);
    expect((await t.call({ method: 'GET', url: `${V1}/trust/snapshot`, token: narrow })).statusCode).toBe(403);
  });
});

describe('each dimension moves with the live state', () => {
  it('audit and integrity: a chain verification makes them known; audit ages out after 7 and 30 days', async () => {
    await ok('POST', 'audit/chain/verify', {});
    let s = await snapshot();
    expect(dim(s, 'audit').badge).toBe('green');
    // The chain is intact, the restore side unknown: partial evidence is only yellow.
    expect(dim(s, 'integrity')).toMatchObject({ badge: 'yellow', drillIn: '/backups', apiDrillIn: `${V1}/backups/ladder` });
    expect(s.numbers.recentAudits24h).toBeGreaterThanOrEqual(2); // the bound token and the verification
    clock.advance(8 * 24 * HOUR);
    s = await snapshot();
    expect(dim(s, 'audit').badge).toBe('yellow');
    expect(s.numbers.recentAudits24h).toBe(0);
    clock.advance(23 * 24 * HOUR);
    expect(dim(await snapshot(), 'audit').badge).toBe('red');
    await ok('POST', 'audit/chain/verify', {});
    expect(dim(await snapshot(), 'audit').badge).toBe('green');
  });

  it('posture: the compliance evaluation sets it, with the control counts of the posture', async () => {
    await runJob(t, 'compliance-evaluate');
    const posture = await ok('GET', 'compliance/posture');
    const s = await snapshot();
    const sum = (k: string) => posture.frameworks.reduce((n: number, f: Json) => n + f[k], 0);
    expect(s.numbers.postureGreen).toBe(sum('passing'));
    expect(s.numbers.postureFailing).toBe(sum('failing'));
    expect(s.numbers.postureFailing).toBeGreaterThan(0); // no restore verification, no drill yet
    const worst = posture.frameworks.some((f: Json) => f.badge === 'red') ? 'red' : 'yellow';
    expect(dim(s, 'posture')).toMatchObject({ badge: worst, drillIn: '/compliance', apiDrillIn: `${V1}/compliance/posture` });
    expect(s.overallBadge).toBe(worst === 'red' ? 'red' : 'yellow');
  });

  it('freshness: a materialised graph is fresh, then goes stale as time passes', async () => {
    await runJob(t, 'graph-materialise');
    let s = await snapshot();
    const lag0 = s.numbers.graphLagSec as number;
    expect(lag0).toBeLessThanOrEqual(SNAPSHOT_RULES.freshness.graphLagSec.green);
    // Graph green, rollup and backups unknown: partial evidence is yellow.
    expect(dim(s, 'freshness').badge).toBe('yellow');
    await runJob(t, 'analytics-rollup');
    clock.advance(20 * 60_000);
    s = await snapshot();
    expect(s.numbers.graphLagSec).toBe(lag0 + 1200);
    expect(dim(s, 'freshness')).toMatchObject({ badge: 'yellow', drillIn: '/empire/graph' });
    clock.advance(2 * HOUR);
    s = await snapshot();
    expect(s.numbers.graphLagSec).toBe(lag0 + 1200 + 7200);
    expect(dim(s, 'freshness')).toMatchObject({ badge: 'red', drillIn: '/empire/graph', apiDrillIn: `${V1}/empire/graph/slo` });
    expect(s.overallBadge).toBe('red');
    await runJob(t, 'graph-materialise');
    await runJob(t, 'analytics-rollup');
    expect((await snapshot()).numbers.graphLagSec).toBe(lag0);
  }, 120_000);

  it('incidents: an open critical incident is red until it is resolved through the API', async () => {
    const principal: Principal = { userId: 'snapshot-test', username: 'snapshot-test', scopes: new Set(), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
    const opened = await withTransaction(t.app.database.db, (tx) =>
      t.app.empire.incidents.openWithin(tx, { principal, requestId: 'snapshot-test' }, { toolset: 'crawler-lab', severity: 'critical', title: 'Crawl surge', source: 'test', eventIds: [], details: {} }),
    );
    let s = await snapshot();
    expect(s.numbers.openIncidents).toBe(1);
    expect(dim(s, 'incidents')).toMatchObject({ badge: 'red', summary: expect.stringContaining('1 critical, 0 major, 0 minor') });
    expect(s.overallBadge).toBe('red');
    await ok('POST', `empire/incidents/${opened.id}`, { status: 'acknowledged' });
    expect((await snapshot()).numbers.openIncidents).toBe(1);
    await ok('POST', `empire/incidents/${opened.id}`, { status: 'resolved' });
    s = await snapshot();
    expect(s.numbers.openIncidents).toBe(0);
    expect(dim(s, 'incidents').badge).toBe('green');
  });

  it('integrity: a tampered audit chain is red once verified, and points at the chain', async () => {
    await exec(sql`UPDATE audit_facts SET payload = jsonb_set(payload, '{tampered}', 'true') WHERE seq_no = 2`);
    const verified = await ok('POST', 'audit/chain/verify', {});
    expect(verified.intact).toBe(false);
    const s = await snapshot();
    expect(dim(s, 'integrity')).toMatchObject({ badge: 'red', drillIn: '/audit', apiDrillIn: `${V1}/audit/chain`, summary: expect.stringMatching(/found it broken/) });
    expect(s.overallBadge).toBe('red');
    expect(s.score.breakdown.find((r: Json) => r.dimension === 'integrity')).toMatchObject({ weight: 30, badge: 'red', contribution: 0 });
  });

  it('drift: open and acknowledged events by severity, and those opened in the last 24 hours', async () => {
    const insert = (severity: string, status: string, openedAt: Date) =>
      exec(sql`INSERT INTO trust_drift_events (id, kind, source, source_id, description, severity, status, opened_at, payload)
               VALUES (${randomUUID()}, 'graph-drift', 'graph', ${randomUUID()}, 'test', ${severity}, ${status}, ${openedAt.toISOString()}, '{}'::jsonb)`);
    await insert('minor', 'acknowledged', new Date(clock.now().getTime() - 48 * HOUR));
    let s = await snapshot();
    expect(dim(s, 'drift')).toMatchObject({ badge: 'yellow', drillIn: '/trust/drift' });
    expect(s.numbers.driftEvents24h).toBe(0);
    await insert('critical', 'open', clock.now());
    await insert('major', 'resolved', clock.now());
    s = await snapshot();
    expect(dim(s, 'drift')).toMatchObject({ badge: 'red', summary: '2 drift events open or acknowledged (1 critical, 0 major, 1 minor).' });
    expect(s.numbers.driftEvents24h).toBe(2);
  });
});

describe('federation parity (the snapshot service over a given FederationReads)', () => {
  const fanOut = (parity: 'drifted' | 'matched'): RegionDigestFanOut => ({
    participating: ['eu-west', 'us-east'],
    failed: [],
    tuples: [],
    federationDigest: 'f'.repeat(64),
    migrationParity: parity,
    migrationDriftDetails: [],
  });
  const federation = (answer: () => Promise<RegionDigestFanOut>): FederationReads => ({
    currentRegion: 'eu-west',
    localTuple: () => Promise.reject(new Error('not used')),
    fanOutDigest: answer,
  });
  const service = (fed: FederationReads, timeoutMs: number = SNAPSHOT_RULES.federationTimeoutMs) =>
    createTrustSnapshotService({
      clock,
      sources: t.app.trust.sources,
      drift: t.app.trust.drift,
      federation: fed,
      rules: { ...SNAPSHOT_RULES, federationTimeoutMs: timeoutMs },
    });

  it('matched and drifted parity reach the numbers and integrity; a failed or slow fan-out is unknown', async () => {
    const matched = await service(federation(async () => fanOut('matched'))).snapshot();
    expect(matched.numbers).toMatchObject({ migrationParity: 'matched', federationDigest: 'f'.repeat(64) });
    const drifted = await service(federation(async () => fanOut('drifted'))).snapshot();
    expect(drifted.numbers.migrationParity).toBe('drifted');
    expect(drifted.dimensions.find((d) => d.key === 'integrity')!.summary).toMatch(/Migration digests differ/);
    const failed = await service(federation(() => Promise.reject(new Error('bridge down')))).snapshot();
    expect(failed.numbers).toMatchObject({ migrationParity: 'unknown', federationDigest: null });
    expect(failed.dimensions.find((d) => d.key === 'integrity')!.summary).toMatch(/fan-out failed \(bridge down\)/);
    const slow = await service(federation(() => new Promise(() => {})), 50).snapshot();
    expect(slow.numbers.migrationParity).toBe('unknown');
  });
});
