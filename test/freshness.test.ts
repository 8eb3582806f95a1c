import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.ts';
import { runJob, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire } from './helpers/empire.ts';
import { createTenant } from './helpers/honeypot.ts';

/**
 * Answers served from derived data say how fresh they are (docs/operations.md, "How fresh is an
 * answer"): after ingest and before the producing job runs, the answer's `freshness.asOf` is older
 * than the event (or null with a reason); once the job runs (on demand, as an operator forces it),
 * `asOf` moves past it. Time is a ManualClock; jobs run through `POST {v1}/ops/jobs/{job}/run`.
 */

const T0 = new Date('2026-11-26T10:00:00.000Z');
const MINUTE = 60_000;
const clock = new ManualClock(T0);
let t: TestApp;

type Json = Record<string, any>;
const iso = (ms: number) => new Date(ms).toISOString();
/** The lag an answer states: its generation time less its as-of, in seconds. */
const lagOf = (body: Json) => (Date.parse(body.generatedAt) - Date.parse(body.freshness.asOf)) / 1000;

async function ok(options: { method: 'GET' | 'POST'; url: string; payload?: Json; query?: Record<string, string> }): Promise<Json> {
  const res = await t.call(options);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

describe('graph query', () => {
  const text = "MATCH (e:EmpireEvent) WHERE e.eventType = 'fresh.probe' RETURN count(e) AS n";
  const graphQuery = () => ok({ method: 'POST', url: `${V1}/empire/graph/query`, payload: { query: text } });

  it('says the graph was never materialised, then how far behind the event it is, then that it caught up', async () => {
    clock.set(T0);
    const never = await graphQuery();
    expect(never.rows).toEqual([{ n: 0 }]);
    expect(never.freshness).toEqual({
      asOf: null,
      producer: 'graph-materialise',
      schedule: '* * * * *',
      refresh: `POST ${V1}/ops/jobs/graph-materialise/run`,
      reason: expect.stringMatching(/not materialised EmpireEvent/),
    });

    // The event arrives at T0 + 10 s; a run right after reflects only what was received 60 s before it.
    clock.set(iso(T0.getTime() + 10_000));
    expect((await ingestEmpire(t, 'fresh-lab', [{ id: 'f-1', eventType: 'fresh.probe' }])).statusCode).toBe(200);
    const receivedAt = clock.now().getTime();
    clock.set(iso(T0.getTime() + 20_000));
    await runJob(t, 'graph-materialise');
    const behind = await graphQuery();
    expect(behind.rows).toEqual([{ n: 0 }]);
    expect(Date.parse(behind.freshness.asOf)).toBeLessThan(receivedAt);
    expect(behind.freshness).toMatchObject({ asOf: iso(T0.getTime() + 20_000 - MINUTE), reason: null });
    expect(lagOf(behind)).toBe(60);

    // A minute later the lag has grown while nothing ran; the next run takes the event in.
    clock.set(iso(T0.getTime() + 80_000));
    expect(lagOf(await graphQuery())).toBe(120);
    await runJob(t, 'graph-materialise');
    const caught = await graphQuery();
    expect(caught.rows).toEqual([{ n: 1 }]);
    expect(Date.parse(caught.freshness.asOf)).toBeGreaterThanOrEqual(receivedAt);
    expect(caught.freshness).toMatchObject({ asOf: iso(T0.getTime() + 20_000) });
    expect(lagOf(caught)).toBe(60);
  });
});

describe('analytics query', () => {
  const params = { metric: 'empire.events', from: '2026-11-26', to: '2026-11-27' };
  const analytics = () => ok({ method: 'GET', url: `${V1}/analytics/query`, query: params });

  it('answers 0 with asOf null before the first rollup, then as of each rollup', async () => {
    const D0 = Date.parse('2026-11-26T12:00:00.000Z');
    clock.set(iso(D0));
    const before = await analytics();
    // The graph test's event is in the store, but no rollup has run: the warehouse says 0, and says why.
    expect(before.total.count).toBe(0);
    expect(before.freshness).toMatchObject({ asOf: null, producer: 'analytics-rollup', schedule: '7,22,37,52 * * * *' });
    expect(before.freshness.reason).toMatch(/has not rolled up the source of empire\.events/);

    await runJob(t, 'analytics-rollup');
    const first = await analytics();
    expect(first.total.count).toBe(1);
    expect(first.freshness).toMatchObject({ asOf: iso(D0), reason: null });

    // An event five minutes later is not in the warehouse until the next rollup, and the answer says so.
    clock.set(iso(D0 + 5 * MINUTE));
    expect((await ingestEmpire(t, 'fresh-lab', [{ id: 'f-2', eventType: 'fresh.probe' }])).statusCode).toBe(200);
    const stale = await analytics();
    expect(stale.total.count).toBe(1);
    expect(Date.parse(stale.freshness.asOf)).toBeLessThan(clock.now().getTime());
    expect(lagOf(stale)).toBe(300);

    await runJob(t, 'analytics-rollup');
    const rolled = await analytics();
    expect(rolled.total.count).toBe(2);
    expect(rolled.freshness).toMatchObject({ asOf: iso(D0 + 5 * MINUTE) });
  });

  it('an unknown metric has no as-of and says why', async () => {
    const body = await ok({ method: 'GET', url: `${V1}/analytics/query`, query: { ...params, metric: 'no.such-metric' } });
    expect(body.freshness).toMatchObject({ asOf: null });
    expect(body.freshness.reason).toMatch(/Unknown metric/);
  });
});

describe('alert rule listings', () => {
  const webhook = [{ kind: 'webhook', url: 'https://alerts.example.com/observatory', secret: 'whsec-example-0123456789abcdef' }];

  it('honeypot: null until the rule is evaluated, then the evaluation bound, moving with each run; disabled rules do not count', async () => {
    const R0 = Date.parse('2026-11-26T13:00:30.000Z');
    clock.set(iso(R0));
    await createTenant(t, 'fresh-site');
    const list = () => ok({ method: 'GET', url: `${V1}/honeypot/alerts`, query: { tenant: 'fresh-site' } });
    expect((await list()).freshness.reason).toMatch(/No enabled rule/);

    const created = await ok({
      method: 'POST',
      url: `${V1}/honeypot/alerts`,
      payload: { tenant: 'fresh-site', name: 'Fresh liars', predicate: { kind: 'liar_rate_above', pct: 25, windowMinutes: 60, minEvents: 20 }, destinations: webhook },
    });
    const waiting = await list();
    expect(waiting.freshness).toMatchObject({ asOf: null, producer: 'alert-evaluate', schedule: '* * * * *' });
    expect(waiting.freshness.reason).toMatch(/Not evaluated yet: "Fresh liars"/);

    clock.set(iso(R0 + 2 * MINUTE));
    await runJob(t, 'alert-evaluate');
    const evaluated = await list();
    // A run covers the events received up to 60 s before it.
    expect(evaluated.freshness).toMatchObject({ asOf: iso(R0 + MINUTE), reason: null });
    expect(evaluated.rules[0].evaluatedUntil).toBe(iso(R0 + MINUTE));

    clock.set(iso(R0 + 5 * MINUTE));
    expect(lagOf(await list())).toBe(240);
    await runJob(t, 'alert-evaluate');
    expect((await list()).freshness).toMatchObject({ asOf: iso(R0 + 4 * MINUTE) });

    await ok({ method: 'POST', url: `${V1}/honeypot/alerts/${created.id}`, payload: { enabled: false } });
    expect((await list()).freshness).toMatchObject({ asOf: null, reason: expect.stringMatching(/No enabled rule/) });
  });

  it('empire: the earliest evaluation bound of the enabled rules', async () => {
    const E0 = Date.parse('2026-11-26T14:00:30.000Z');
    clock.set(iso(E0));
    const list = () => ok({ method: 'GET', url: `${V1}/empire/fresh-lab/alerts` });
    await ok({
      method: 'POST',
      url: `${V1}/empire/fresh-lab/alerts`,
      payload: { name: 'Probe burst', predicate: { kind: 'empire_count_gte', count: 5, windowMinutes: 15, eventType: 'fresh.probe' }, destinations: webhook },
    });
    const waiting = await list();
    expect(waiting.freshness).toMatchObject({ asOf: null, producer: 'empire-alert-evaluate', reason: expect.stringMatching(/Not evaluated yet: "Probe burst"/) });

    clock.set(iso(E0 + 2 * MINUTE));
    await runJob(t, 'empire-alert-evaluate');
    expect((await list()).freshness).toMatchObject({ asOf: iso(E0 + MINUTE), refresh: `POST ${V1}/ops/jobs/empire-alert-evaluate/run` });
  });
});

describe('forecasts and the honeypot dashboard', () => {
  it('forecasts: null before any run, then the end of the complete hours the newest run scored', async () => {
    const F0 = Date.parse('2026-11-26T15:20:00.000Z');
    clock.set(iso(F0));
    const forecasts = () => ok({ method: 'GET', url: `${V1}/empire/forecast` });
    const none = await forecasts();
    expect(none.forecasts).toEqual([]);
    expect(none.freshness).toMatchObject({ asOf: null, producer: 'forecast', schedule: '*/15 * * * *', reason: expect.stringMatching(/No forecast yet/) });

    await runJob(t, 'forecast');
    const scored = await forecasts();
    expect(scored.forecasts.map((f: Json) => f.toolset)).toContain('fresh-lab');
    // A run at 15:20 scores the hours up to 15:00: an event of 15:10 waits for the first run after 16:00.
    expect(scored.freshness).toMatchObject({ asOf: '2026-11-26T15:00:00.000Z', reason: null });
  });

  it('the dashboard, clusters and fleet apply every acknowledged event before reading: as of the read', async () => {
    clock.set('2026-11-26T16:00:00.000Z');
    for (const url of [`${V1}/honeypot/dashboard`, `${V1}/honeypot/clusters`, `${V1}/honeypot/fleet`]) {
      const body = await ok({ method: 'GET', url });
      expect(body.freshness, url).toEqual({ asOf: body.generatedAt, producer: 'read', schedule: null, refresh: null, reason: null });
    }
  });
});
