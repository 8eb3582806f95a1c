import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIncident } from '../../domains/empire/incidents/repository.ts';
import { triageProposals } from '../../domains/triage/schema.ts';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire, tokenBoundTo } from '../../../test/helpers/empire.ts';
import { CHROME_UA, createTenant, GPTBOT_UA, signedIngest } from '../../../test/helpers/honeypot.ts';

/**
 * The analytics warehouse over HTTP (spec B group 4 `analytics/metrics`, `analytics/query`; D5
 * `analytics-rollup`; docs/analytics/README.md): facts made through the real write paths (signed honeypot
 * ingest, empire ingest, incident resolution, triage decisions, cost records), the rollup run
 * through `POST {v1}/ops/jobs/analytics-rollup/run`, and every answer compared with counts known
 * from the dataset. Then late data, a replaced cost record, reruns, and the refusals.
 */

const T0 = new Date('2026-11-26T10:00:00.000Z');
const clock = new ManualClock(T0);
const HOUR = 3_600_000;
let t: TestApp;
let labToken = '';
let readerToken = '';

type Json = Record<string, any>;

async function query(params: Record<string, string>, token?: string): Promise<{ status: number; body: Json; text: string }> {
  const res = await t.call({ method: 'GET', url: `${V1}/analytics/query`, query: params, ...(token === undefined ? {} : { token }) });
  return { status: res.statusCode, body: res.json(), text: res.body };
}
async function ok(params: Record<string, string>, token?: string): Promise<Json> {
  const res = await query(params, token);
  expect(res.status, res.text).toBe(200);
  return res.body;
}
/** The body without its generation time: what must be byte-identical for the same warehouse state. */
const stable = (text: string) => text.replace(/"generatedAt":"[^"]*",?/, '');
/** The series as compact tuples [day, workspace, toolset, severity, region, value, count]. */
const tuples = (body: Json) => (body.series as Json[]).map((p) => [p.dimDate, p.dimWorkspaceId, p.dimToolset, p.dimSeverity, p.dimRegion, p.value, p.count]);

async function honeypot(slug: string, secret: string, events: { ts: string; ua: string; ip: string }[]) {
  const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events: events.map((e) => ({ path: '/honeypot/topics/a', ...e })) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().events as { uaClass: string }[];
}
async function empire(toolset: string, events: Record<string, unknown>[]) {
  const res = await ingestEmpire(t, toolset, events as never);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().accepted).toBe(events.length);
}
async function costRecords(records: Record<string, unknown>[]) {
  const res = await t.call({ method: 'POST', url: `${V1}/cost/records`, payload: { records } });
  expect(res.statusCode, res.body).toBe(200);
}
async function pendingInvestigation(toolset: string | null): Promise<string> {
  const id = randomUUID();
  await t.app.database.db.insert(triageProposals).values({
    id,
    runId: randomUUID(),
    kind: 'investigation',
    status: 'pending',
    agent: 'investigation-proposer',
    agentVersion: '1.1.0',
    toolset,
    title: `Look at ${toolset ?? 'the fleet'}`,
    payload: { toolset: toolset ?? 'fleet', name: `view ${id.slice(0, 8)}`, rationale: ['a test'], filters: {} },
    evidenceEventIds: [],
    createdAt: clock.now(),
  });
  return id;
}
async function decide(id: string, accept: boolean) {
  const res = await t.call({ method: 'POST', url: `${V1}/empire/triage/decide`, payload: { id, accept } });
  expect(res.statusCode, res.body).toBe(200);
}
async function warehouseRows(): Promise<string[]> {
  const result = await t.app.database.db.execute(
    sql`SELECT metric, day::text, workspace_id, toolset, severity, region, value_micro::text, count::text FROM analytics_daily ORDER BY 1, 2, 3, 4, 5, 6`,
  );
  return rowsOf<Record<string, string>>(result).map((r) => Object.values(r).join('|'));
}

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5' } });
  readerToken = await t.tokenWith(['read:empire']);
  labToken = await tokenBoundTo(t, ['read:empire'], ['crawler-lab']);

  // Honeypot: shop-eu 2 LIAR + 1 browser on the 24th, 1 browser on the 25th; shop-us 6 LIAR (a
  // tarpit) and 2 browsers on the 26th.
  const eu = await createTenant(t, 'shop-eu');
  const us = await createTenant(t, 'shop-us');
  const classes = [
    ...(await honeypot('shop-eu', eu, [
      { ts: '2026-11-24T08:00:00Z', ua: GPTBOT_UA, ip: '203.0.113.50' },
      { ts: '2026-11-24T23:59:59Z', ua: GPTBOT_UA, ip: '203.0.113.50' },
      { ts: '2026-11-24T12:00:00Z', ua: CHROME_UA, ip: '198.51.100.1' },
      { ts: '2026-11-25T00:00:00Z', ua: CHROME_UA, ip: '198.51.100.2' },
    ])),
    ...(await honeypot('shop-us', us, [
      ...Array.from({ length: 6 }, (_, i) => ({ ts: `2026-11-26T09:5${i}:00Z`, ua: GPTBOT_UA, ip: '203.0.113.77' })),
      { ts: '2026-11-26T09:00:00Z', ua: CHROME_UA, ip: '198.51.100.3' },
      { ts: '2026-11-26T09:30:00Z', ua: CHROME_UA, ip: '198.51.100.4' },
    ])),
  ];
  expect(classes.filter((c) => c.uaClass === 'LIAR')).toHaveLength(8);

  // Empire: crawler-lab 3 events (2 for tenant acme) on the 25th and 1 on the 26th; probe-kit 2 on the 26th.
  await empire('crawler-lab', [
    { id: 'c-1', eventType: 'crawl.page', tenant: 'acme', ts: '2026-11-25T10:00:00Z' },
    { id: 'c-2', eventType: 'crawl.page', tenant: 'acme', ts: '2026-11-25T11:00:00Z' },
    { id: 'c-3', eventType: 'crawl.page', ts: '2026-11-25T12:00:00Z' },
    { id: 'c-4', eventType: 'crawl.page', tenant: 'globex', ts: '2026-11-26T09:00:00Z' },
  ]);
  await empire('probe-kit', [
    { id: 'p-1', eventType: 'probe.sent', tenant: 'acme', ts: '2026-11-26T08:00:00Z' },
    { id: 'p-2', eventType: 'probe.sent', tenant: 'acme', ts: '2026-11-26T08:30:00Z' },
  ]);

  // Incidents: two opened on the 24th (one resolved 90 minutes later through the API), one on the 26th.
  const db = t.app.database.db;
  const incident = (id: string, toolset: string, severity: string, openedAt: string) =>
    insertIncident(db, { id, toolset, severity, title: `${toolset} ${severity}`, status: 'open', source: 'triage', eventIds: [], details: {}, openedAt: new Date(openedAt), resolvedAt: null });
  await incident('00000000-0000-4000-8000-00000000000a', 'crawler-lab', 'major', '2026-11-24T06:00:00Z');
  await incident('00000000-0000-4000-8000-00000000000b', 'crawler-lab', 'minor', '2026-11-24T07:00:00Z');
  await incident('00000000-0000-4000-8000-00000000000c', 'probe-kit', 'critical', '2026-11-26T09:00:00Z');
  clock.set('2026-11-24T07:30:00.000Z');
  const resolved = await t.call({ method: 'POST', url: `${V1}/empire/incidents/00000000-0000-4000-8000-00000000000a`, payload: { status: 'resolved' } });
  expect(resolved.statusCode, resolved.body).toBe(200);

  // Triage: on the 25th one crawler-lab proposal accepted and one fleet-wide rejected; on the 26th one crawler-lab rejected.
  clock.set('2026-11-25T15:00:00.000Z');
  await decide(await pendingInvestigation('crawler-lab'), true);
  await decide(await pendingInvestigation(null), false);
  clock.set(T0);
  await decide(await pendingInvestigation('crawler-lab'), false);

  // Cost: exact decimals that a float sum would get wrong.
  await costRecords([
    { date: '2026-11-24', toolset: 'crawler-lab', vendor: 'openai', sku: 'in', workspace: 'proj-a', region: 'us', amountUsd: 0.1 },
    { date: '2026-11-24', toolset: 'crawler-lab', vendor: 'openai', sku: 'out', workspace: 'proj-a', region: 'us', amountUsd: 0.2 },
    { date: '2026-11-25', toolset: 'probe-kit', vendor: 'aws', sku: 'ec2', workspace: '', region: 'eu-west-1', amountUsd: 12.345678 },
    { date: '2026-11-25', toolset: 'probe-kit', vendor: 'aws', sku: 'credit', workspace: '', region: '', amountUsd: -2 },
  ]);
});
afterAll(async () => t?.close());

describe('GET analytics/metrics', () => {
  it('lists every metric with its dimensions and unit, each key once', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/analytics/metrics`, token: readerToken });
    expect(res.statusCode, res.body).toBe(200);
    const metrics = res.json().metrics as Json[];
    expect(metrics.map((m) => m.key)).toEqual([
      'honeypot.events',
      'honeypot.liar-events',
      'honeypot.tarpits-opened',
      'empire.events',
      'empire.incidents-opened',
      'empire.incidents-resolved',
      'empire.incident-open-seconds',
      'triage.proposals-decided',
      'triage.proposals-accepted',
      'cost.spend',
    ]);
    expect(metrics.find((m) => m.key === 'cost.spend')).toMatchObject({ dimensions: ['workspaceId', 'toolset', 'region'], unit: 'usd' });
    expect(metrics.find((m) => m.key === 'empire.incidents-opened')).toMatchObject({ dimensions: ['toolset', 'severity', 'region'], unit: 'count' });
  });
});

describe('the analytics-rollup schedule (D5)', () => {
  it('runs every 15 minutes at :07, :22, :37 and :52 UTC', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health` });
    expect(res.statusCode, res.body).toBe(200);
    const job = (res.json().latestPerJob as Json[]).find((j) => j.job === 'analytics-rollup');
    expect(job).toMatchObject({ schedule: '7,22,37,52 * * * *', nextRunAt: '2026-11-26T10:07:00.000Z' });
  });
});

describe('before the first rollup', () => {
  it('answers every day with zeros: the query reads the warehouse, never the events', async () => {
    const body = await ok({ metric: 'honeypot.events', from: '2026-11-24', to: '2026-11-27' });
    expect(tuples(body)).toEqual([
      ['2026-11-24', '', '', '', '', 0, 0],
      ['2026-11-25', '', '', '', '', 0, 0],
      ['2026-11-26', '', '', '', '', 0, 0],
    ]);
    expect(body).toMatchObject({ unknownMetric: false, invalidDims: [], dims: [], total: { value: 0, count: 0 } });
  });
});

describe('the analytics-rollup job and the query', () => {
  const range = { from: '2026-11-24', to: '2026-11-27' };

  beforeAll(async () => {
    const stats = (await runJob(t, 'analytics-rollup')) as unknown as { sources: Record<string, { days: number; rows: number }> };
    expect(stats.sources['honeypot-events']).toEqual({ days: 3, rows: 5 });
    expect(stats.sources['empire-incidents']!.days).toBe(2);
  });

  it('counts honeypot events and LIAR events per tenant and UTC day of the event time', async () => {
    const events = await ok({ metric: 'honeypot.events', ...range, dims: 'workspaceId' });
    expect(tuples(events)).toEqual([
      ['2026-11-24', 'shop-eu', '', '', '', 3, 3],
      ['2026-11-25', 'shop-eu', '', '', '', 1, 1],
      ['2026-11-26', 'shop-us', '', '', '', 8, 8],
    ]);
    expect(events.total).toEqual({ value: 12, count: 12 });
    const liars = await ok({ metric: 'honeypot.liar-events', ...range, dims: 'workspaceId,region' });
    expect(tuples(liars)).toEqual([
      ['2026-11-24', 'shop-eu', '', '', 'local', 2, 2],
      ['2026-11-26', 'shop-us', '', '', 'local', 6, 6],
    ]);
  });

  it('counts the tarpits the liar flood opened, as stored', async () => {
    const stored = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM honeypot_tarpits`))[0]!.n;
    expect(stored).toBeGreaterThan(0);
    const body = await ok({ metric: 'honeypot.tarpits-opened', ...range, dims: 'workspaceId' });
    expect(tuples(body)).toEqual([['2026-11-26', 'shop-us', '', '', '', stored, stored]]);
  });

  it('counts empire events by source tenant and toolset, filters exactly, and answers every dimension order the same', async () => {
    const body = await ok({ metric: 'empire.events', ...range, dims: 'toolset,workspaceId' });
    expect(body.dims).toEqual(['workspaceId', 'toolset']);
    expect(tuples(body)).toEqual([
      ['2026-11-25', '', 'crawler-lab', '', '', 1, 1],
      ['2026-11-25', 'acme', 'crawler-lab', '', '', 2, 2],
      ['2026-11-26', 'acme', 'probe-kit', '', '', 2, 2],
      ['2026-11-26', 'globex', 'crawler-lab', '', '', 1, 1],
    ]);
    const reordered = await query({ metric: 'empire.events', ...range, dims: 'workspaceId,toolset,workspaceId' });
    expect(stable(reordered.text)).toBe(stable((await query({ metric: 'empire.events', ...range, dims: 'toolset,workspaceId' })).text));
    const acme = await ok({ metric: 'empire.events', ...range, workspace: 'acme' });
    expect(acme.filters).toEqual({ workspace: 'acme', toolset: null, severity: null, region: null });
    expect(tuples(acme)).toEqual([
      ['2026-11-24', '', '', '', '', 0, 0],
      ['2026-11-25', '', '', '', '', 2, 2],
      ['2026-11-26', '', '', '', '', 2, 2],
    ]);
    const noTenant = await ok({ metric: 'empire.events', ...range, workspace: '', dims: 'toolset' });
    expect(tuples(noTenant)).toEqual([['2026-11-25', '', 'crawler-lab', '', '', 1, 1]]);
  });

  it('counts incidents opened and resolved by day, toolset and severity, and the exact time they stayed open', async () => {
    const opened = await ok({ metric: 'empire.incidents-opened', ...range, dims: 'toolset,severity' });
    expect(tuples(opened)).toEqual([
      ['2026-11-24', '', 'crawler-lab', 'major', '', 1, 1],
      ['2026-11-24', '', 'crawler-lab', 'minor', '', 1, 1],
      ['2026-11-26', '', 'probe-kit', 'critical', '', 1, 1],
    ]);
    const resolved = await ok({ metric: 'empire.incidents-resolved', ...range, dims: 'severity' });
    expect(tuples(resolved)).toEqual([['2026-11-24', '', '', 'major', '', 1, 1]]);
    const seconds = await ok({ metric: 'empire.incident-open-seconds', ...range, severity: 'major' });
    expect(seconds.unit).toBe('seconds');
    expect(seconds.total).toEqual({ value: 1.5 * 3600, count: 1 });
  });

  it('counts operator decisions (accepted ones apart), fleet-wide ones under toolset \'\'', async () => {
    const decided = await ok({ metric: 'triage.proposals-decided', ...range, dims: 'toolset' });
    expect(tuples(decided)).toEqual([
      ['2026-11-25', '', '', '', '', 1, 1],
      ['2026-11-25', '', 'crawler-lab', '', '', 1, 1],
      ['2026-11-26', '', 'crawler-lab', '', '', 1, 1],
    ]);
    const accepted = await ok({ metric: 'triage.proposals-accepted', ...range });
    expect(accepted.total).toEqual({ value: 1, count: 1 });
  });

  it('sums cost exactly, with the records\' own workspace, toolset and region', async () => {
    const body = await ok({ metric: 'cost.spend', ...range, dims: 'toolset,region' });
    expect(body.unit).toBe('usd');
    expect(tuples(body)).toEqual([
      ['2026-11-24', '', 'crawler-lab', '', 'us', 0.3, 2],
      ['2026-11-25', '', 'probe-kit', '', '', -2, 1],
      ['2026-11-25', '', 'probe-kit', '', 'eu-west-1', 12.345678, 1],
    ]);
    expect(body.total).toEqual({ value: 10.645678, count: 4 });
  });

  it('answers an unknown metric and foreign dimensions in the body, not as errors', async () => {
    const unknown = await ok({ metric: 'honeypot.nope', ...range, dims: 'toolset,colour' });
    expect(unknown).toMatchObject({ metric: 'honeypot.nope', unit: null, unknownMetric: true, dims: ['toolset'], invalidDims: ['colour'], series: [], total: { value: 0, count: 0 } });
    const foreign = await ok({ metric: 'honeypot.events', ...range, dims: 'severity,workspaceId,colour,severity' });
    expect(foreign.dims).toEqual(['workspaceId']);
    expect(foreign.invalidDims).toEqual(['severity', 'colour']);
    expect(tuples(foreign)).toHaveLength(3);
    // A filter on a dimension the metric does not carry matches nothing and says why.
    const filtered = await ok({ metric: 'honeypot.events', ...range, toolset: 'crawler-lab' });
    expect(filtered.invalidDims).toEqual(['toolset']);
    expect(filtered.total).toEqual({ value: 0, count: 0 });
  });

  it('answers the same bytes for the same warehouse state, apart from generatedAt', async () => {
    const params = { metric: 'empire.events', ...range, dims: 'workspaceId,toolset,region' };
    const first = await query(params);
    clock.set(new Date(T0.getTime() + 5 * 60_000));
    const second = await query(params);
    expect(JSON.parse(first.text).generatedAt).not.toBe(JSON.parse(second.text).generatedAt);
    expect(stable(second.text)).toBe(stable(first.text));
  });

  it('rerun: writes the same rows and opens nothing new', async () => {
    const before = await warehouseRows();
    clock.set(new Date(T0.getTime() + 15 * 60_000));
    await runJob(t, 'analytics-rollup');
    expect(await warehouseRows()).toEqual(before);
  });

  it('late data re-rolls the day it lands on; a replaced cost record replaces, never adds', async () => {
    const beforeDays = await ok({ metric: 'empire.events', ...range });
    clock.set(new Date(T0.getTime() + 2 * HOUR));
    await empire('crawler-lab', [{ id: 'late-1', eventType: 'crawl.page', tenant: 'acme', ts: '2026-11-24T03:00:00Z' }]);
    await costRecords([{ date: '2026-11-24', toolset: 'crawler-lab', vendor: 'openai', sku: 'in', workspace: 'proj-a', region: 'us', amountUsd: 1.1 }]);
    // Not in the warehouse until the job runs.
    expect(tuples(await ok({ metric: 'empire.events', ...range }))).toEqual(tuples(beforeDays));
    clock.set(new Date(T0.getTime() + 2 * HOUR + 7 * 60_000));
    const stats = (await runJob(t, 'analytics-rollup')) as unknown as { sources: Record<string, { days: number }> };
    expect(stats.sources['empire-events']!.days).toBe(1);
    expect(stats.sources['cost-records']!.days).toBe(1);
    expect(stats.sources['honeypot-events']!.days).toBe(0);
    const after = await ok({ metric: 'empire.events', ...range });
    expect(tuples(after).map((p) => p[6])).toEqual([1, 3, 3]);
    const cost = await ok({ metric: 'cost.spend', ...range });
    expect(cost.series[0]).toMatchObject({ dimDate: '2026-11-24', value: 1.3, count: 2 });
  });

  it('keeps a token bound to toolsets to its toolsets\' rows, and reads the honeypot fleet\'s metrics (no toolset\'s) whole', async () => {
    const own = await ok({ metric: 'empire.events', ...range, dims: 'toolset' }, labToken);
    expect(new Set(tuples(own).map((p) => p[2]))).toEqual(new Set(['crawler-lab']));
    const fleet = await ok({ metric: 'honeypot.events', ...range, dims: 'workspaceId' }, labToken);
    expect(tuples(fleet)).toEqual(tuples(await ok({ metric: 'honeypot.events', ...range, dims: 'workspaceId' }, readerToken)));
    expect(fleet.total.count).toBeGreaterThan(0);
    expect((await query({ metric: 'cost.spend', ...range, toolset: 'probe-kit' }, labToken)).status).toBe(403);
    const everyone = await ok({ metric: 'cost.spend', ...range }, readerToken);
    const lab = await ok({ metric: 'cost.spend', ...range }, labToken);
    expect(lab.total).toEqual({ value: 1.3, count: 2 });
    expect(everyone.total.count).toBe(4);
  });

  it('refuses a bad range with svc-error.v1', async () => {
    for (const [params, reason] of [
      [{ metric: 'honeypot.events', from: '2026-02-30', to: '2026-03-02' }, 'invalid-query'],
      [{ metric: 'honeypot.events', from: '1969-12-31', to: '1970-01-02' }, 'invalid-date'],
      [{ metric: 'honeypot.events', from: '2026-11-26', to: '2026-11-26' }, 'invalid-range'],
      [{ metric: 'honeypot.events', from: '2025-01-01', to: '2026-11-26' }, 'invalid-range'],
    ] as const) {
      const res = await query(params);
      expect(res.status, res.text).toBe(400);
      expect(res.body).toMatchObject({ schema: 'svc-error.v1', reason });
    }
    const missing = await query({ from: '2026-11-24', to: '2026-11-25' });
    expect(missing.status).toBe(400);
    const anonymous = await t.call({ method: 'GET', url: `${V1}/analytics/query`, query: { metric: 'honeypot.events', ...range }, token: null });
    expect(anonymous.statusCode).toBe(401);
  });
});
