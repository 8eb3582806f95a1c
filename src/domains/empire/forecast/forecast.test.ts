import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire } from '../../../../test/helpers/empire.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { canMove } from '../incidents/service.ts';
import type { EmpireEvent } from '../ingest/service.ts';

const HOUR = 3_600_000;
const clock = new ManualClock('2026-11-24T12:10:00.000Z');
/** The forecaster's window ends at the start of the current hour. */
const windowEnd = Date.parse('2026-11-24T12:00:00.000Z');
let t: TestApp;

/** `perHour(h)` events in each of the 168 hours before the window's end (h = 0 is the oldest). */
async function seed(toolset: string, perHour: (hour: number) => number) {
  const events: EmpireEvent[] = [];
  for (let h = 0; h < 168; h++) {
    for (let k = 0; k < perHour(h); k++) {
      events.push({ id: `${toolset}-${h}-${k}`, eventType: 'tick', ts: new Date(windowEnd - (168 - h) * HOUR + k * 1000).toISOString() });
    }
  }
  for (let i = 0; i < events.length; i += 500) expect((await ingestEmpire(t, toolset, events.slice(i, i + 500))).statusCode).toBe(200);
}

const run = async (payload: object = {}) => {
  const res = await t.call({ method: 'POST', url: `${V1}/empire/forecast`, payload });
  expect(res.statusCode).toBe(200);
  return res.json<{ ok: boolean; runId: string; forecastsCreated: number; latchedIncidentIds: string[] }>();
};
type Forecast = { toolset: string; score: number; level: string; direction: string; recentMean: number; baselineMean: number };
const forecasts = async () => (await t.call({ method: 'GET', url: `${V1}/empire/forecast` })).json<{ forecasts: Forecast[] }>().forecasts;

beforeAll(async () => {
  t = await startTestApp({ clock });
  await seed('calm-lab', () => 4);
  // 4 an hour for 165 hours, then 20 an hour: z = 16 / max(0, 2, 1) = 8, score ≈ 0.93.
  await seed('surge-lab', (h) => (h >= 165 ? 20 : 4));
  // Events only before the 7-day window: this toolset is not scored.
  const stale = Array.from({ length: 50 }, (_, i): EmpireEvent => ({ id: `stale-${i}`, eventType: 'tick', ts: new Date(windowEnd - 169 * HOUR - i * 60_000).toISOString() }));
  expect((await ingestEmpire(t, 'stale-lab', stale)).statusCode).toBe(200);
});
afterAll(() => t?.close());

describe('the forecaster', () => {
  it('scores every toolset with events in the window from its hourly buckets', async () => {
    const first = await run();
    expect(first).toMatchObject({ ok: true, forecastsCreated: 2, latchedIncidentIds: [] });
    const byToolset = new Map((await forecasts()).map((f) => [f.toolset, f]));
    expect(byToolset.get('calm-lab')).toMatchObject({ score: 0, level: 'none', direction: 'steady', recentMean: 4, baselineMean: 4 });
    const surge = byToolset.get('surge-lab')!;
    expect(surge).toMatchObject({ level: 'alert', direction: 'surge', recentMean: 20, baselineMean: 4 });
    expect(surge.score).toBeCloseTo(1 - Math.exp(-8 / 3), 4);
  });

  it('opens one minor incident on the third consecutive alert run, and not again in that streak', async () => {
    clock.advance(15 * 60_000);
    expect((await run()).latchedIncidentIds).toEqual([]);
    clock.advance(15 * 60_000);
    const third = await run();
    expect(third.latchedIncidentIds).toHaveLength(1);
    clock.advance(15 * 60_000);
    expect((await run()).latchedIncidentIds).toEqual([]);

    const listed = (await t.call({ method: 'GET', url: `${V1}/empire/incidents?toolset=surge-lab` })).json();
    expect(listed.incidents).toHaveLength(1);
    const incident = (await t.call({ method: 'GET', url: `${V1}/empire/incidents/${third.latchedIncidentIds[0]}` })).json().incident;
    expect(incident).toMatchObject({ toolset: 'surge-lab', severity: 'minor', status: 'open', source: 'forecast', resolvedAt: null });
    expect(incident.title).toContain('surge-lab');
    expect(incident.eventIds).toHaveLength(20);
    expect(incident.details).toMatchObject({ runId: third.runId, recentMean: 20, baselineMean: 4 });
  });

  it('is scheduled every 15 minutes', () => {
    const first = t.app.scheduler.nextRunAt('forecast', new Date('2026-11-24T12:01:00.000Z'));
    expect(first?.toISOString()).toBe('2026-11-24T12:15:00.000Z');
    expect(t.app.scheduler.nextRunAt('forecast', first!)?.toISOString()).toBe('2026-11-24T12:30:00.000Z');
  });

  it('runs as the job `forecast`, with a run record', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/forecast/run` });
    expect(res.statusCode).toBe(200);
    expect(res.json().run).toMatchObject({ outcome: 'ok', stats: { forecastsCreated: 2, latchedIncidents: 0 } });
  });

  it('answers stub with the same empty pass every time and writes nothing', async () => {
    const before = await forecasts();
    const a = await run({ stub: true });
    const b = await run({ stub: true });
    expect(a).toEqual(b);
    expect(a).toMatchObject({ ok: true, forecastsCreated: 0, latchedIncidentIds: [] });
    expect(await forecasts()).toEqual(before);
  });

  it('refuses a bad body and checks scopes', async () => {
    const bad = await t.call({ method: 'POST', url: `${V1}/empire/forecast`, payload: { stub: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('body.stub');
    const reader = await t.tokenWith(['read:empire']);
    expect((await t.call({ method: 'POST', url: `${V1}/empire/forecast`, payload: {}, token: reader })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/empire/forecast`, token: reader })).statusCode).toBe(200);
  });
});

describe('incidents', () => {
  it('move open → acknowledged → resolved or open → resolved, never back', () => {
    expect(canMove('open', 'acknowledged')).toBe(true);
    expect(canMove('open', 'resolved')).toBe(true);
    expect(canMove('acknowledged', 'resolved')).toBe(true);
    expect(canMove('acknowledged', 'open')).toBe(false);
    expect(canMove('resolved', 'acknowledged')).toBe(false);
    expect(canMove('resolved', 'resolved')).toBe(true);
  });

  it('answers 404 for an unknown incident and 400 for a bad filter', async () => {
    expect((await t.call({ method: 'GET', url: `${V1}/empire/incidents/6a0f0a7e-0000-4000-8000-000000000000` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${V1}/empire/incidents/nope` })).statusCode).toBe(404);
    const bad = await t.call({ method: 'GET', url: `${V1}/empire/incidents?status=closed` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('query.status');
    expect((await t.call({ method: 'GET', url: `${V1}/empire/incidents?status=resolved` })).json().incidents).toEqual([]);
  });

  it('is acknowledged, then resolved (stamping resolvedAt), each change audited; resolved is final', async () => {
    const [incident] = (await t.call({ method: 'GET', url: `${V1}/empire/incidents?toolset=surge-lab` })).json().incidents;
    const url = `${V1}/empire/incidents/${incident.id}`;
    const ack = await t.call({ method: 'POST', url, payload: { status: 'acknowledged', notes: 'looking' } });
    expect(ack.statusCode, ack.body).toBe(200);
    expect(ack.json()).toMatchObject({ schema: 'svc-empire-incident.v1', incident: { id: incident.id, status: 'acknowledged', resolvedAt: null } });
    // Asking again changes nothing.
    expect((await t.call({ method: 'POST', url, payload: { status: 'acknowledged' } })).json().incident.status).toBe('acknowledged');
    clock.advance(60_000);
    const resolved = await t.call({ method: 'POST', url, payload: { status: 'resolved' } });
    expect(resolved.json().incident).toMatchObject({ status: 'resolved', resolvedAt: clock.now().toISOString() });
    expect((await t.call({ method: 'GET', url })).json().incident).toMatchObject({ status: 'resolved', resolvedAt: clock.now().toISOString() });
    const reopen = await t.call({ method: 'POST', url, payload: { status: 'acknowledged' } });
    expect(reopen.statusCode).toBe(409);
    expect(reopen.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=50` })).json();
    const changes = JSON.stringify(audit).match(/empire-incident\.update/g) ?? [];
    expect(changes).toHaveLength(2);
  });

  it('refuses a change with a bad status, an unknown id, no credential or without write:alerts', async () => {
    const [incident] = (await t.call({ method: 'GET', url: `${V1}/empire/incidents` })).json().incidents;
    const url = `${V1}/empire/incidents/${incident.id}`;
    const bad = await t.call({ method: 'POST', url, payload: { status: 'open' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ reason: 'invalid-body', field: 'body.status' });
    expect((await t.call({ method: 'POST', url: `${V1}/empire/incidents/6a0f0a7e-0000-4000-8000-000000000000`, payload: { status: 'resolved' } })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url, payload: { status: 'resolved' }, token: null })).statusCode).toBe(401);
    const reader = await t.tokenWith(['read:empire']);
    expect((await t.call({ method: 'POST', url, payload: { status: 'resolved' }, token: reader })).statusCode).toBe(403);
  });
});
