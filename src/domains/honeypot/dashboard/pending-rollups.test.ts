import { type SQL, sql } from 'drizzle-orm';
import type { App } from '../../../app.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { newFingerprints } from '../alerts/repository.ts';

// Ingest stores events with a pending row; the rollups and fingerprint counters take them in when
// the pending row is applied (docs/honeypot/dashboard.md, "Pending rollups"). This app holds its
// pending rows (the background applier waits ten minutes), so each test decides when they apply.
const clock = new ManualClock('2026-11-23T10:30:00.000Z');
let t: TestApp;
let secret: string;
let sent = 0;

const LIAR_IP = '198.51.100.20';

async function query<T>(q: SQL): Promise<T[]> {
  return rowsOf<T>(await t.app.database.db.execute(q));
}

async function send(events: Record<string, unknown>[], slug = 'pend', via = t) {
  const res = await signedIngest(via, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { eventId: string; fingerprintId: string; uaClass: string }[] }>();
}

const event = (over: Record<string, unknown> = {}) => ({ id: `e${++sent}`, path: `/honeypot/topics/p${sent % 3}`, ua: CHROME_UA, ip: '203.0.113.5', ...over });

async function pendingEventCount(): Promise<number> {
  const [row] = await query<{ n: number }>(sql`SELECT coalesce(sum(cardinality(event_ids)), 0)::int AS n FROM honeypot_rollup_pending`);
  return row!.n;
}

/** Events per tenant as the hourly rollup, the fingerprints and the events table count them. */
async function counts() {
  const [row] = await query<{ events: number; hourly: number; fingerprints: number }>(sql`SELECT
      (SELECT count(*) FROM honeypot_events)::int AS events,
      (SELECT coalesce(sum(events), 0) FROM honeypot_rollup_hourly)::int AS hourly,
      (SELECT coalesce(sum(event_count), 0) FROM honeypot_fingerprints)::int AS fingerprints`);
  return row!;
}

/** Every fingerprint row next to what the events table says of it. */
async function fingerprintsAgainstEvents() {
  return query<Record<string, unknown>>(sql`SELECT f.fingerprint_id,
      f.event_count::int AS count, e.n AS expected_count, f.liar_count::int AS liars, e.liars AS expected_liars,
      f.first_seen = e.first AS first_ok, f.last_seen = e.last AS last_ok
    FROM honeypot_fingerprints f FULL JOIN (
      SELECT tenant_id, fingerprint_id, count(*)::int AS n, count(*) FILTER (WHERE ua_class = 'LIAR')::int AS liars, min(ts) AS first, max(ts) AS last
      FROM honeypot_events GROUP BY 1, 2) e ON e.tenant_id = f.tenant_id AND e.fingerprint_id = f.fingerprint_id
    ORDER BY 1`);
}

function expectConsistent(rows: Record<string, unknown>[]) {
  expect(rows.length).toBeGreaterThan(0);
  for (const r of rows) expect(r, String(r.fingerprint_id)).toMatchObject({ count: r.expected_count, liars: r.expected_liars, first_ok: true, last_ok: true });
}

const get = (url: string) => t.call({ method: 'GET', url });

/** The test app's helpers, calling another instance of it (ingest is signed, so no token is sent). */
const via = (other: App): TestApp => ({ ...t, call: ({ token: _none, ...options }) => other.server.inject(options) });

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_ROLLUP_APPLY_DELAY_MS: '600000' } });
  secret = await createTenant(t, 'pend');
});
afterAll(() => t.close());

describe('pending rollups', () => {
  it('queue an acknowledged group as one pending row, which the counters do not count yet', async () => {
    const answer = await send([event(), event({ ua: GPTBOT_UA, ip: LIAR_IP }), event({ ua: GPTBOT_UA, ip: GPTBOT_IP })]);
    expect(answer.events.map((e) => e.uaClass)).toEqual(['BROWSER', 'LIAR', 'KNOWN_LLM_AGENT']);
    const pending = await query<{ ids: string[] }>(sql`SELECT event_ids::text[] AS ids FROM honeypot_rollup_pending`);
    expect(pending).toHaveLength(1);
    expect([...pending[0]!.ids].sort()).toEqual(answer.events.map((e) => e.eventId).sort());
    expect(await counts()).toEqual({ events: 3, hourly: 0, fingerprints: 0 });
  });

  it('are applied before every counter read, so each read counts every acknowledged event', async () => {
    const reads: [string, (body: Record<string, any>) => void][] = [
      [`${V1}/honeypot/dashboard?tenant=pend&window=24h`, (body) => expect(body.kpis.totalEvents).toBe(sent)],
      [`${V1}/honeypot/clusters?tenant=pend&window=24h`, (body) => expect(body.clusters.reduce((n: number, c: any) => n + c.eventCount, 0)).toBe(sent)],
      [`${V1}/honeypot/fleet`, (body) => expect(body.tenants.find((x: any) => x.slug === 'pend').events24h).toBe(sent)],
      [`${V1}/honeypot/ops/heartbeat`, (body) => expect(body.silentTenants).toEqual([])],
      [`${V1}/honeypot/investigate?tenant=pend&fingerprintId=FP`, (body) => expect(body.found).toBe(true)],
    ];
    for (const [url, check] of reads) {
      const answer = await send([event({ ua: `probe-agent/${url.length}` })]);
      const fp = answer.events[0]!.fingerprintId;
      expect(await pendingEventCount(), url).toBeGreaterThan(0);
      const res = await get(url.replace('FP', fp));
      expect(res.statusCode, res.body).toBe(200);
      check(res.json());
      expect(await pendingEventCount(), url).toBe(0);
    }
    expect(await counts()).toEqual({ events: sent, hourly: sent, fingerprints: sent });
  });

  it('keep each fingerprint equal to its events once applied: counts, liars, first and last seen', async () => {
    clock.set('2026-11-23T10:40:00.000Z');
    await send([
      event({ ua: GPTBOT_UA, ip: LIAR_IP, ts: '2026-11-23T10:39:00Z' }),
      event({ ua: GPTBOT_UA, ip: LIAR_IP, ts: '2026-11-20T01:00:00Z' }),
      event({ ua: GPTBOT_UA, ip: GPTBOT_IP, ts: '2026-11-23T10:41:00Z' }),
    ]);
    await send([event({ ts: '2026-11-22T09:00:00Z' }), event({ ua: GPTBOT_UA, ip: LIAR_IP })]);
    expect(await pendingEventCount()).toBe(5);
    await t.app.honeypot.dashboard.applyPending();
    expect(await pendingEventCount()).toBe(0);
    expectConsistent(await fingerprintsAgainstEvents());
    // Applying with nothing pending changes nothing.
    const before = await fingerprintsAgainstEvents();
    await t.app.honeypot.dashboard.applyPending();
    expect(await fingerprintsAgainstEvents()).toEqual(before);
  });

  it('are counted once when the rollups are rebuilt while they wait, fingerprints included', async () => {
    await send([event(), event({ ua: GPTBOT_UA, ip: LIAR_IP })]);
    expect(await pendingEventCount()).toBe(2);
    const run = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-rebuild/run` });
    expect(run.json().run.outcome).toBe('ok');
    expect(await pendingEventCount()).toBe(0);
    const { events, hourly } = await counts();
    expect(hourly).toBe(events);
    const day = await get(`${V1}/honeypot/dashboard?tenant=pend&window=30d`);
    expect(day.json().kpis.totalEvents).toBe(events);
    // The rebuild leaves the fingerprints alone: the pending events reached them all the same.
    expectConsistent(await fingerprintsAgainstEvents());
  });

  it('are added against the windows they were stored under when the windows move on', async () => {
    clock.set('2026-11-23T11:10:00.000Z');
    const before24h = (await get(`${V1}/honeypot/dashboard?tenant=pend&window=24h`)).json().kpis.totalEvents as number;
    // In the 24h window now (it starts 2026-11-22T12:00); it leaves that window at 12:00 today.
    await send([event({ id: 'leaving', ts: '2026-11-22T12:30:00Z' })]);
    expect(await pendingEventCount()).toBe(1);
    clock.set('2026-11-23T13:05:00.000Z');
    const run = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` });
    expect(run.json().run.stats).toMatchObject({ advanced: true, from24h: '2026-11-22T14:00:00.000Z' });
    expect(await pendingEventCount()).toBe(0);
    const [{ n }] = (await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM honeypot_events
      WHERE least(ts, received_at) >= '2026-11-22T14:00:00Z'`)) as [{ n: number }];
    const day = (await get(`${V1}/honeypot/dashboard?tenant=pend&window=24h`)).json();
    expect(day.kpis.totalEvents).toBe(n);
    expect(day.kpis.totalEvents).toBeLessThan(before24h + 1);
    const dims = await query(sql`SELECT dim, key, events_24h::int, events_7d::int, events_30d::int FROM honeypot_rollup_dims ORDER BY 1, 2`);
    const rebuilt = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-rebuild/run` });
    expect(rebuilt.json().run.outcome).toBe('ok');
    expect(await query(sql`SELECT dim, key, events_24h::int, events_7d::int, events_30d::int FROM honeypot_rollup_dims ORDER BY 1, 2`)).toEqual(dims);
  });

  it('count toward the running totals the new_fingerprint_cluster alert reads, applied or not', async () => {
    const [{ id: tenantId }] = (await query<{ id: string }>(sql`SELECT id FROM honeypot_tenants WHERE slug = 'pend'`)) as [{ id: string }];
    const after = new Date(clock.now().getTime() - 1);
    await send([event({ ua: 'fresh-agent/1' }), event({ ua: 'fresh-agent/1' }), event({ ua: 'fresh-agent/1' })]);
    expect(await pendingEventCount()).toBe(3);
    const span = { tenantId, after, upTo: new Date(clock.now().getTime() + 1000), minEvents: 2, limit: 20 };
    const whilePending = await newFingerprints(t.app.database.db, span);
    await t.app.honeypot.dashboard.applyPending();
    const applied = await newFingerprints(t.app.database.db, span);
    expect(applied).toEqual({ total: 1, rows: [expect.objectContaining({ uaSample: 'fresh-agent/1', eventsInPeriod: 3, eventsTotal: 3 })] });
    expect(whilePending).toEqual(applied);
    // A later period holding another of its events (pending): it crossed before, so not again.
    clock.set(new Date(span.upTo.getTime() + 5_000).toISOString());
    await send([event({ ua: 'fresh-agent/1' })]);
    const later = { ...span, after: span.upTo, upTo: new Date(clock.now().getTime() + 1000) };
    expect(await newFingerprints(t.app.database.db, { ...later, minEvents: 1 })).toEqual({ total: 0, rows: [] });
    expect(await newFingerprints(t.app.database.db, { ...later, minEvents: 4 })).toEqual({
      total: 1,
      rows: [expect.objectContaining({ eventsInPeriod: 1, eventsTotal: 4 })],
    });
  });

  it('are applied by two instances at once without losing or double-counting an event', async () => {
    const other = await t.secondInstance();
    const viaOther = via(other);
    const waiting = await pendingEventCount();
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => send([event({ ua: i % 2 ? GPTBOT_UA : CHROME_UA, ip: i % 3 ? LIAR_IP : GPTBOT_IP }), event()], 'pend', i % 2 ? viaOther : t)),
    );
    expect(await pendingEventCount()).toBe(waiting + 24);
    await Promise.all([t.app.honeypot.dashboard.applyPending(), other.honeypot.dashboard.applyPending(), t.app.honeypot.dashboard.applyPending()]);
    expect(await pendingEventCount()).toBe(0);
    const { events, hourly, fingerprints } = await counts();
    expect({ hourly, fingerprints }).toEqual({ hourly: events, fingerprints: events });
    expectConsistent(await fingerprintsAgainstEvents());
  });

  it('are applied in the background shortly after a group commits, with no read', async () => {
    const quick = await t.secondInstance({ OBSERVATORY_ROLLUP_APPLY_DELAY_MS: '20' });
    await send([event(), event()], 'pend', via(quick));
    await vi.waitFor(async () => expect(await pendingEventCount()).toBe(0), { timeout: 10_000, interval: 25 });
    const { events, hourly, fingerprints } = await counts();
    expect({ hourly, fingerprints }).toEqual({ hourly: events, fingerprints: events });
  });
});
