import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode } from '../../../../test/helpers/empire.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { ManualClock } from '../../../platform/clock.ts';
import type { EmpireEvent } from '../ingest/service.ts';
import { sloBadge } from './slo.ts';

/** The dashboard, overview, SLO and replay views over events ingested through the API. */

// Late in the 12:00 hour, so the event stamped 13:00 (d-future) is within ingest's 5-minute bound on ts.
const clock = new ManualClock('2026-11-24T12:56:00.000Z');
let t: TestApp;
const key = nodeKeyPair();
let keyId: string;

const get = async (url: string, token?: string | null) => t.call({ method: 'GET', url, ...(token !== undefined ? { token } : {}) });
const ok = async <T = Record<string, any>>(url: string): Promise<T> => {
  const res = await get(url);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<T>();
};
const ingestOk = async (toolset: string, events: EmpireEvent[]) => {
  const res = await ingestEmpire(t, toolset, events);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ results: { id: string; eventId: string | null; rejectionReason: string | null }[] }>();
};
const db = () => t.app.database.db;

beforeAll(async () => {
  t = await startTestApp({ clock });
  keyId = await registerKey(t, 'dash-lab', key.publicKeyB64);
  const signed = (e: EmpireEvent) => signWithNode('dash-lab', e, key.privateKey);
  await ingestOk('dash-lab', [
    // The current hour (12:00–13:00): three events of acme, two of them signed.
    signed({ id: 'd-now-1', eventType: 'crawl.page', ts: '2026-11-24T12:05:00Z', tenant: 'acme' }),
    signed({ id: 'd-now-2', eventType: 'crawl.page', ts: '2026-11-24T12:06:00.000Z', tenant: 'acme', causedBy: null, payload: {} }),
    { id: 'd-now-3', eventType: 'crawl.page', ts: '2026-11-24T12:07:00.000Z', tenant: 'acme' },
    // The window's first hour (yesterday 13:00–14:00).
    { id: 'd-first', eventType: 'crawl.started', ts: '2026-11-23T13:30:00.000Z', tenant: 'beta' },
    // No tenant, with a cause.
    { id: 'd-linked', eventType: 'crawl.page', ts: '2026-11-24T10:00:00.000Z', causedBy: 'd-first' },
    // One minute before the 24-hour window: counted in 7 days only.
    { id: 'd-before', eventType: 'crawl.page', ts: '2026-11-23T12:59:00.000Z', tenant: 'acme' },
    // Stamped in the next hour (4 minutes ahead of the clock): counted nowhere.
    { id: 'd-future', eventType: 'crawl.page', ts: '2026-11-24T13:00:00.000Z', tenant: 'acme' },
  ]);
  await ingestOk('quiet-lab', [{ id: 'q-1', eventType: 'tick', ts: '2026-11-14T12:00:00.000Z' }]);
});
afterAll(() => t?.close());

type Dashboard = {
  toolset: string;
  tenant: string | null;
  window: string;
  windowStartIso: string;
  windowEndIso: string;
  blurb: string;
  kpis: { id: string; value: number | null; precision: number; unit: string | null; label: string }[];
  eventsPerHour: { bucketIso: string; count: number }[];
  eventTypeBreakdown: { eventType: string; count: number }[];
  tenantBreakdown: { tenant: string | null; count: number }[];
  lastEventAt: string | null;
};
const kpi = (d: Dashboard, id: string) => d.kpis.find((k) => k.id === id)?.value;

describe('GET /empire/{toolset}/dashboard', () => {
  it('counts the last 24 whole hours by event time, the current hour last', async () => {
    const d = await ok<Dashboard>(`${V1}/empire/dash-lab/dashboard`);
    expect(d).toMatchObject({ schema: 'svc-empire-dashboard.v1', toolset: 'dash-lab', tenant: null, window: '24h' });
    expect(d.windowStartIso).toBe('2026-11-23T13:00:00.000Z');
    expect(d.windowEndIso).toBe('2026-11-24T13:00:00.000Z');
    expect(d.eventsPerHour).toHaveLength(24);
    expect(d.eventsPerHour[0]).toEqual({ bucketIso: '2026-11-23T13:00:00.000Z', count: 1 });
    expect(d.eventsPerHour[21]).toEqual({ bucketIso: '2026-11-24T10:00:00.000Z', count: 1 });
    expect(d.eventsPerHour[23]).toEqual({ bucketIso: '2026-11-24T12:00:00.000Z', count: 3 });
    expect(d.eventsPerHour.reduce((n, h) => n + h.count, 0)).toBe(5);
    expect(d.eventTypeBreakdown).toEqual([
      { eventType: 'crawl.page', count: 4 },
      { eventType: 'crawl.started', count: 1 },
    ]);
    expect(d.tenantBreakdown).toEqual([
      { tenant: 'acme', count: 3 },
      { tenant: 'beta', count: 1 },
      { tenant: null, count: 1 },
    ]);
    expect(d.lastEventAt).toBe('2026-11-24T12:07:00.000Z');
  });

  it('derives the documented KPIs', async () => {
    const d = await ok<Dashboard>(`${V1}/empire/dash-lab/dashboard?window=24h`);
    expect(d.kpis.map((k) => k.id)).toEqual(['events', 'events-per-hour', 'peak-hour', 'active-hours', 'tenants', 'event-types', 'signed-pct', 'linked-pct']);
    expect(kpi(d, 'events')).toBe(5);
    expect(kpi(d, 'events-per-hour')).toBe(0.2);
    expect(kpi(d, 'peak-hour')).toBe(3);
    expect(kpi(d, 'active-hours')).toBe(3);
    expect(kpi(d, 'tenants')).toBe(2);
    expect(kpi(d, 'event-types')).toBe(2);
    expect(kpi(d, 'signed-pct')).toBe(40);
    expect(kpi(d, 'linked-pct')).toBe(20);
    expect(d.kpis.find((k) => k.id === 'signed-pct')).toMatchObject({ unit: '%', precision: 1 });
    expect(d.blurb).toBe('5 events from dash-lab in the last 24 hours from 2 tenants; 40% signed; most common type crawl.page (80%).');
  });

  it('filters by source tenant and widens to 7 and 30 days', async () => {
    const acme = await ok<Dashboard>(`${V1}/empire/dash-lab/dashboard?tenant=acme`);
    expect(acme.tenant).toBe('acme');
    expect(kpi(acme, 'events')).toBe(3);
    expect(acme.tenantBreakdown).toEqual([{ tenant: 'acme', count: 3 }]);
    expect(acme.blurb).toMatch(/^3 events from dash-lab for tenant acme in the last 24 hours; 66\.7% signed/);

    const week = await ok<Dashboard>(`${V1}/empire/dash-lab/dashboard?window=7d`);
    expect(week.eventsPerHour).toHaveLength(168);
    expect(week.windowStartIso).toBe('2026-11-17T13:00:00.000Z');
    expect(kpi(week, 'events')).toBe(6);
    const month = await ok<Dashboard>(`${V1}/empire/dash-lab/dashboard?window=30d`);
    expect(month.eventsPerHour).toHaveLength(720);
    expect(kpi(month, 'events')).toBe(6);
  });

  it('answers zeros, with a sentence that says why, for a quiet or unknown toolset', async () => {
    const quiet = await ok<Dashboard>(`${V1}/empire/quiet-lab/dashboard`);
    expect(kpi(quiet, 'events')).toBe(0);
    expect(kpi(quiet, 'signed-pct')).toBeNull();
    expect(quiet.blurb).toBe('No events from quiet-lab in the last 24 hours; the latest is from 2026-11-14T12:00:00.000Z.');
    const never = await ok<Dashboard>(`${V1}/empire/never-lab/dashboard`);
    expect(never.eventsPerHour.every((h) => h.count === 0)).toBe(true);
    expect(never).toMatchObject({ blurb: 'No events have been received from never-lab.', lastEventAt: null, eventTypeBreakdown: [], tenantBreakdown: [] });
  });

  it('refuses a window or toolset outside the spec with svc-error 400', async () => {
    const badWindow = await get(`${V1}/empire/dash-lab/dashboard?window=1h`);
    expect(badWindow.statusCode).toBe(400);
    expect(badWindow.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    const badToolset = await get(`${V1}/empire/x/dashboard`);
    expect(badToolset.statusCode).toBe(400);
    expect(badToolset.json()).toMatchObject({ schema: 'svc-error.v1' });
  });
});

type Overview = { toolsets: { toolset: string; blurb: string; events24h: number; events7d: number; lastEventAt: string | null; sparkline24h: number[] }[] };

describe('GET /empire/overview', () => {
  it('lists every toolset by name with 24h and 7d counts and a 24-value sparkline', async () => {
    const o = await ok<Overview>(`${V1}/empire/overview`);
    expect(o.toolsets.map((r) => r.toolset)).toEqual(['dash-lab', 'quiet-lab']);
    const dash = o.toolsets[0]!;
    expect(dash).toMatchObject({ events24h: 5, events7d: 6, lastEventAt: '2026-11-24T12:07:00.000Z' });
    expect(dash.sparkline24h).toHaveLength(24);
    expect(dash.sparkline24h.reduce((a, b) => a + b, 0)).toBe(dash.events24h);
    expect(dash.sparkline24h[0]).toBe(1);
    expect(dash.sparkline24h[23]).toBe(3);
    // 5 in 24 hours against 6 in 7 days: far above its hourly average.
    expect(dash.blurb).toBe('5 events in the last 24 hours, busier than its 7-day average; latest event 2026-11-24T12:07:00.000Z.');
    expect(o.toolsets[1]).toMatchObject({ events24h: 0, events7d: 0, sparkline24h: new Array(24).fill(0), lastEventAt: '2026-11-14T12:00:00.000Z' });
    expect(o.toolsets[1]!.blurb).toBe('No events in the last 7 days; latest event 2026-11-14T12:00:00.000Z.');
  });

  it('answers the federated overview for federated=1 (the seed registry: this deployment alone) and refuses other values', async () => {
    const local = await ok<Overview>(`${V1}/empire/overview`);
    const federated = await ok<Overview & { participatingRegions: string[]; failedRegions: unknown[] }>(`${V1}/empire/overview?federated=1`);
    expect(federated.participatingRegions).toEqual(['local']);
    expect(federated.failedRegions).toEqual([]);
    const figures = (rows: Overview['toolsets']) => rows.map(({ toolset, events24h, events7d, lastEventAt, sparkline24h }) => ({ toolset, events24h, events7d, lastEventAt, sparkline24h }));
    expect(figures(federated.toolsets)).toEqual(figures(local.toolsets));
    for (const row of federated.toolsets as (Overview['toolsets'][number] & { perRegion: Record<string, number> })[]) {
      expect(row.perRegion).toEqual({ local: row.events24h });
    }
    expect((await get(`${V1}/empire/overview?federated=yes`)).statusCode).toBe(400);
  });
});

type Replay = {
  mode: 'event' | 'list';
  toolset: string;
  eventId: string | null;
  id: string | null;
  matches: boolean;
  compared: string[];
  fields: { field: string; stored: string | null; replayed: string | null }[];
  envelope: Record<string, unknown> | null;
  envelopes: { eventId: string; id: string; matches: boolean; differingFields: string[]; receivedAt: string }[] | null;
};

describe('GET /empire/{toolset}/replay', () => {
  it('re-derives a signed event (ts spelled without milliseconds) and finds it unchanged', async () => {
    const r = await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-now-1`);
    expect(r).toMatchObject({ schema: 'svc-empire-replay.v1', mode: 'event', toolset: 'dash-lab', id: 'd-now-1', matches: true, fields: [] });
    expect(r.compared).toEqual(['schemaVersion', 'eventHash', 'attestedEventHash', 'bodyBytes', 'admission']);
    expect(r.envelope).toEqual({ schemaVersion: 1, receivedAt: '2026-11-24T12:56:00.000Z', sourceTenant: 'acme', bodyBytes: expect.any(Number), eventType: 'crawl.page', causedBy: null });
    // The same event by the eventId ingest answered.
    const byUuid = await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=${r.eventId}`);
    expect(byUuid).toMatchObject({ id: 'd-now-1', matches: true });
  });

  it('rebuilds an explicit causedBy null and an empty payload as they were signed', async () => {
    expect(await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-now-2`)).toMatchObject({ matches: true, fields: [] });
    expect(await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-linked`)).toMatchObject({ matches: true, envelope: { causedBy: 'd-first', sourceTenant: null } });
  });

  it('still admits an event signed before its key was retired', async () => {
    clock.advance(60_000);
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/keys/${keyId}/retire`, payload: {} })).statusCode).toBe(200);
    expect(await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-now-1`)).toMatchObject({ matches: true });
  });

  it('reports a tampered payload: the hash no longer matches what was stored or attested, nor does the signature', async () => {
    await ingestOk('tamper-lab', [{ id: 't-1', eventType: 'x', payload: { amount: 1 } }]);
    await db().execute(sql`UPDATE empire_events SET payload = '{"amount": 2}'::jsonb WHERE toolset = 'tamper-lab' AND sender_id = 't-1'`);
    const r = await ok<Replay>(`${V1}/empire/tamper-lab/replay?eventId=t-1`);
    expect(r.matches).toBe(false);
    expect(r.fields.map((f) => f.field)).toEqual(['eventHash', 'attestedEventHash']);
    const [stored] = rowsOf<{ hash: string }>(await db().execute(sql`SELECT event_hash AS hash FROM empire_events WHERE sender_id = 't-1'`));
    expect(r.fields[0]).toMatchObject({ field: 'eventHash', stored: stored!.hash });
    expect(r.fields[0]!.replayed).not.toBe(stored!.hash);

    // Rewriting the stored hash as well still leaves the attestation's hash apart.
    await db().execute(sql`UPDATE empire_events SET event_hash = ${r.fields[0]!.replayed} WHERE sender_id = 't-1'`);
    const again = await ok<Replay>(`${V1}/empire/tamper-lab/replay?eventId=t-1`);
    expect(again.fields.map((f) => f.field)).toEqual(['attestedEventHash']);
  });

  it('reports a signed event whose signature no longer verifies', async () => {
    await db().execute(
      sql`UPDATE provenance_attestations SET signature_b64 = ${Buffer.alloc(64, 1).toString('base64')} WHERE id = (SELECT attestation_id FROM empire_events WHERE sender_id = 'd-now-2')`,
    );
    const r = await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-now-2`);
    expect(r.fields).toEqual([{ field: 'admission', stored: `signed:${keyId}`, replayed: 'rejected:bad-signature' }]);
  });

  it('re-derives events stored before rows kept their signed shape and attestation id', async () => {
    await db().execute(sql`UPDATE empire_events SET signed_members = NULL, attestation_id = NULL WHERE toolset = 'dash-lab' AND sender_id IN ('d-now-1', 'd-first')`);
    expect(await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-now-1`)).toMatchObject({ matches: true });
    expect(await ok<Replay>(`${V1}/empire/dash-lab/replay?eventId=d-first`)).toMatchObject({ matches: true });
  });

  it('replays under the signing rule now in force: a compat event is flagged once signatures are required', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_REQUIRE_SIGNED_EVENTS: '1' });
    const res = await strict.server.inject({ method: 'GET', url: `${V1}/empire/dash-lab/replay?eventId=d-now-3`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.json()).toMatchObject({ matches: false, fields: [{ field: 'admission', stored: 'compat', replayed: 'rejected:unsigned' }] });
  });

  it('lists the most recently received envelopes, each replayed', async () => {
    clock.advance(60_000);
    await ingestOk('list-lab', [{ id: 'l-1', eventType: 'a' }]);
    clock.advance(60_000);
    await ingestOk('list-lab', [
      { id: 'l-2', eventType: 'b' },
      { id: 'l-3', eventType: 'c' },
    ]);
    await db().execute(sql`UPDATE empire_events SET body_bytes = 1 WHERE sender_id = 'l-1'`);
    const all = await ok<Replay>(`${V1}/empire/list-lab/replay?list=1`);
    expect(all).toMatchObject({ mode: 'list', eventId: null, envelope: null, matches: false });
    expect(all.envelopes!.map((e) => e.id).sort()).toEqual(['l-1', 'l-2', 'l-3']);
    expect(all.envelopes![2]).toMatchObject({ id: 'l-1', matches: false, differingFields: ['bodyBytes'] });
    const newest = await ok<Replay>(`${V1}/empire/list-lab/replay?limit=2`);
    expect(newest.envelopes!.map((e) => e.id).sort()).toEqual(['l-2', 'l-3']);
    expect(newest.matches).toBe(true);
  });

  it('404s an unknown event or one of another toolset, and 400s eventId with list=1', async () => {
    for (const url of [`${V1}/empire/dash-lab/replay?eventId=nope`, `${V1}/empire/quiet-lab/replay?eventId=d-now-1`, `${V1}/empire/dash-lab/replay?eventId=00000000-0000-4000-8000-000000000000`]) {
      const res = await get(url);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    }
    const both = await get(`${V1}/empire/dash-lab/replay?eventId=d-now-1&list=1`);
    expect(both.statusCode).toBe(400);
    expect(both.json()).toMatchObject({ reason: 'invalid-query', field: 'query.list' });
    expect((await get(`${V1}/empire/dash-lab/replay?list=1&limit=201`)).statusCode).toBe(400);
  });
});

type Slo = {
  window: string;
  windowStartIso: string;
  rows: { toolset: string; badge: string; totalSamples: number; okCount: number; okRatePct: number | null; outcomeBreakdown: { outcome: string; count: number }[]; p50Ms: number | null; p95Ms: number | null; p99Ms: number | null }[];
};

describe('GET /empire/slo', () => {
  it('summarises each toolset\'s ingest requests with exact percentiles and a badge', async () => {
    clock.advance(3 * 3_600_000);
    // 9 clean requests and one with a refused event: a 90% ok rate is red whatever the latency.
    for (let i = 0; i < 9; i++) await ingestOk('slo-lab', [{ id: `s-${i}`, eventType: 'tick' }]);
    await ingestOk('slo-lab', [{ id: 's-bad', eventType: 'tick', signatureB64: Buffer.alloc(64).toString('base64') }]);
    // 3 clean requests: too few to judge.
    for (let i = 0; i < 3; i++) await ingestOk('few-lab', [{ id: `f-${i}`, eventType: 'tick' }]);
    const slo = await ok<Slo>(`${V1}/empire/slo?window=1h`);
    expect(slo).toMatchObject({ schema: 'svc-empire-slo.v1', window: '1h', windowStartIso: new Date(clock.now().getTime() - 3_600_000).toISOString() });
    const row = slo.rows.find((r) => r.toolset === 'slo-lab')!;
    expect(row).toMatchObject({ badge: 'red', totalSamples: 10, okCount: 9, okRatePct: 90 });
    expect(row.outcomeBreakdown).toEqual([
      { outcome: 'ok', count: 9 },
      { outcome: 'rejected-events', count: 1 },
    ]);
    expect(row.p50Ms! <= row.p95Ms! && row.p95Ms! <= row.p99Ms!).toBe(true);
    const [exact] = rowsOf<{ p50: number }>(
      await db().execute(sql`SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms)::float8 AS p50 FROM empire_ingest_samples WHERE toolset = 'slo-lab'`),
    );
    expect(row.p50Ms).toBe(Number(exact!.p50));
    expect(slo.rows.find((r) => r.toolset === 'few-lab')).toMatchObject({ badge: 'unknown', totalSamples: 3, okRatePct: 100 });
    for (const r of slo.rows) expect(r.badge).toBe(sloBadge(r));
  });

  it('lists a toolset sampled in the last 7 days with no samples in a shorter window as unknown', async () => {
    const slo = await ok<Slo>(`${V1}/empire/slo?window=1h`);
    // dash-lab's requests were sampled more than an hour ago.
    expect(slo.rows.find((r) => r.toolset === 'dash-lab')).toEqual({
      toolset: 'dash-lab',
      badge: 'unknown',
      totalSamples: 0,
      okCount: 0,
      okRatePct: null,
      outcomeBreakdown: [],
      p50Ms: null,
      p95Ms: null,
      p99Ms: null,
    });
    const day = await ok<Slo>(`${V1}/empire/slo`);
    expect(day.window).toBe('24h');
    expect(day.rows.find((r) => r.toolset === 'dash-lab')!.totalSamples).toBeGreaterThan(0);
    expect(day.rows.map((r) => r.toolset)).toEqual([...day.rows.map((r) => r.toolset)].sort());
    expect((await get(`${V1}/empire/slo?window=30d`)).statusCode).toBe(400);
    const week = await ok<Slo>(`${V1}/empire/slo?window=7d`);
    expect(week).toMatchObject({ window: '7d', windowStartIso: new Date(clock.now().getTime() - 7 * 24 * 3_600_000).toISOString() });
    expect(week.rows.find((r) => r.toolset === 'slo-lab')!.totalSamples).toBe(10);
  });
});

describe('security of the empire read views', () => {
  const urls = [`${V1}/empire/dash-lab/dashboard`, `${V1}/empire/overview`, `${V1}/empire/slo`, `${V1}/empire/dash-lab/replay`];

  it('401 without a credential, 403 without read:empire, 200 with exactly read:empire', async () => {
    const without = await t.tokenWith(['read:events', 'read:alerts']);
    const withScope = await t.tokenWith(['read:empire']);
    for (const url of urls) {
      const anonymous = await get(url, null);
      expect(anonymous.statusCode, url).toBe(401);
      expect(anonymous.json()).toMatchObject({ schema: 'svc-error.v1' });
      const forbidden = await get(url, without);
      expect(forbidden.statusCode, url).toBe(403);
      expect(forbidden.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
      expect((await get(url, withScope)).statusCode, url).toBe(200);
    }
  });
});
