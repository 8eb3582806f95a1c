import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { CLUSTER_LIMIT, TOP_N } from './service.ts';
import { type Window, WINDOW_HOURS, windowStart } from './rollups.ts';
import { signatureHeader } from '../ingest/signature.ts';

const INGEST = '/api/observatory/honeypot/ingest';
const clock = new ManualClock('2026-11-23T10:30:00.000Z');
let t: TestApp;
const secrets = new Map<string, string>();

const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const GPTBOT_IP = '52.230.152.7';
const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GOOGLEBOT_IP = '2001:4860:4801:10::1';
const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const CURL_UA = 'curl/8.4.0';

type Ev = Record<string, unknown>;

async function createTenant(slug: string) {
  const res = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug, name: `Tenant ${slug}` } });
  expect(res.statusCode, res.body).toBe(200);
  secrets.set(slug, res.json().signingSecret);
}

async function send(slug: string, events: Ev[]) {
  for (let i = 0; i < events.length; i += 500) {
    const raw = JSON.stringify({ events: events.slice(i, i + 500) });
    const res = await t.call({
      method: 'POST',
      url: INGEST,
      token: null,
      payload: raw,
      headers: {
        'content-type': 'application/json',
        'x-observatory-tenant': slug,
        'x-observatory-signature': signatureHeader(secrets.get(slug)!, Math.floor(clock.now().getTime() / 1000), raw),
      },
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

const get = (url: string, token?: string) => t.call({ method: 'GET', url, ...(token ? { token } : {}) });
const iso = (ms: number) => new Date(ms).toISOString();
const hoursAgo = (h: number) => iso(clock.now().getTime() - h * 3_600_000);

async function query<T>(q: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await t.app.database.db.execute(q));
}

/**
 * The dashboard computed straight from honeypot_events, independently of the rollups: the oracle
 * every rollup read is checked against.
 */
async function oracle(slug: string | null, window: Window) {
  const now = clock.now();
  const from = windowStart(window, now).toISOString();
  const tenantFilter = slug === null ? sql`TRUE` : sql`e.tenant_id = (SELECT id FROM honeypot_tenants WHERE slug = ${slug})`;
  const inWindow = sql`${tenantFilter} AND least(e.ts, e.received_at) >= ${from}::timestamptz`;
  const [k] = await query<Record<string, unknown>>(sql`SELECT count(*)::int AS total, count(DISTINCT fingerprint_id)::int AS fps,
      count(*) FILTER (WHERE ua_class = 'LIAR')::int AS liars,
      count(*) FILTER (WHERE ua_class IN ('KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER'))::int AS verified,
      count(*) FILTER (WHERE country IS NOT NULL OR asn IS NOT NULL)::int AS attributed
    FROM honeypot_events e WHERE ${inWindow}`);
  const top = async (column: string, extra = sql`TRUE`) =>
    (
      await query<{ v: string; n: number }>(sql`SELECT ${sql.identifier(column)} AS v, count(*)::int AS n FROM honeypot_events e
        WHERE ${inWindow} AND ${extra} AND ${sql.identifier(column)} IS NOT NULL
        GROUP BY 1 ORDER BY count(*) DESC, ${sql.identifier(column)} COLLATE "C" LIMIT ${TOP_N}`)
    ).map((r) => [r.v, r.n] as const);
  const classes = await query<{ v: string; n: number }>(sql`SELECT ua_class AS v, count(*)::int AS n FROM honeypot_events e WHERE ${inWindow}
    GROUP BY 1 ORDER BY count(*) DESC, ua_class COLLATE "C"`);
  const hours = new Map(
    (
      await query<{ h: unknown; n: number }>(sql`SELECT date_trunc('hour', least(e.ts, e.received_at), 'UTC') AS h, count(*)::int AS n
        FROM honeypot_events e WHERE ${inWindow} GROUP BY 1`)
    ).map((r) => [new Date(String(r.h instanceof Date ? r.h.toISOString() : r.h)).getTime(), r.n]),
  );
  const total = Number(k!.total);
  const pct = (n: number) => (total === 0 ? 0 : Math.round((n / total) * 10000) / 100);
  return {
    tenant: slug,
    window,
    kpis: {
      totalEvents: total,
      uniqueFingerprints: Number(k!.fps),
      liarCount: Number(k!.liars),
      liarRatePct: pct(Number(k!.liars)),
      knownVerifiedCount: Number(k!.verified),
      attributionCoveragePct: pct(Number(k!.attributed)),
    },
    uaClassBreakdown: classes.map((c) => ({ uaClass: c.v, count: c.n })),
    topPaths: (await top('path')).map(([path, count]) => ({ path, count })),
    topCountries: (await top('country')).map(([countryCode, count]) => ({ countryCode, count })),
    topUas: (await top('ua_raw')).map(([uaRaw, count]) => ({ uaRaw, count })),
    topVerifiedVendors: (await top('ua_raw', sql`ua_class IN ('KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER')`)).map(([uaRaw, count]) => ({ uaRaw, count })),
    eventsPerHour: Array.from({ length: WINDOW_HOURS[window] }, (_, i) => {
      const at = windowStart(window, now).getTime() + i * 3_600_000;
      return { bucketIso: iso(at), count: hours.get(at) ?? 0 };
    }),
  };
}

async function dashboardOf(slug: string | null, window: Window) {
  const res = await get(`${V1}/honeypot/dashboard?window=${window}${slug ? `&tenant=${slug}` : ''}`);
  expect(res.statusCode, res.body).toBe(200);
  const { schema, generatedAt, freshness, ...body } = res.json();
  expect(schema).toBe('svc-observatory-dashboard.v1');
  expect(Date.parse(generatedAt)).not.toBeNaN();
  // Every acknowledged event is applied before the read: the answer is as of the read.
  expect(freshness).toMatchObject({ asOf: generatedAt, producer: 'read' });
  return body;
}

async function expectMatchesOracle() {
  for (const slug of [null, 'alpha', 'beta']) {
    for (const window of ['24h', '7d', '30d'] as const) {
      expect(await dashboardOf(slug, window), `${slug ?? 'all'} ${window}`).toEqual(await oracle(slug, window));
    }
  }
}

/** Every rollup table, in key order, for comparing incremental state with a rebuild. */
async function rollupTables() {
  return {
    hourly: await query(sql`SELECT hour::text, tenant_id, events::bigint::text FROM honeypot_rollup_hourly ORDER BY 1, 2`),
    dims: await query(sql`SELECT tenant_id, dim, key, value, events_24h::text, events_7d::text, events_30d::text FROM honeypot_rollup_dims ORDER BY 1, 2, 3`),
    clusters: await query(sql`SELECT tenant_id, fingerprint_id, ua_class, asn::text, ja4, events_24h::text, events_7d::text, events_30d::text
      FROM honeypot_rollup_clusters ORDER BY 1, 2, 3, 4, 5`),
    // A member's history is its clusters row merged with its seen row (either may be missing);
    // which of the two holds a time differs between the two ways, the merge may not.
    members: await query(sql`SELECT tenant_id, fingerprint_id, ua_class, asn::text, ja4, least(c.first_seen, s.first_seen)::text AS first_seen,
        greatest(c.last_seen, s.last_seen)::text AS last_seen,
        CASE WHEN c.ua_sample IS NULL OR s.last_seen > c.last_seen OR (s.last_seen = c.last_seen AND s.ua_sample COLLATE "C" > c.ua_sample COLLATE "C")
          THEN s.ua_sample ELSE c.ua_sample END AS ua_sample
      FROM honeypot_rollup_clusters c FULL JOIN honeypot_rollup_seen s USING (tenant_id, fingerprint_id, ua_class, asn, ja4) ORDER BY 1, 2, 3, 4, 5`),
  };
}

async function expectRebuildChangesNothing() {
  const incremental = await rollupTables();
  expect(incremental.hourly.length).toBeGreaterThan(0);
  const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-rebuild/run` });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().run.outcome).toBe('ok');
  expect(await rollupTables()).toEqual(incremental);
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  for (const slug of ['alpha', 'beta', 'steady', 'busy', 'gone', 'quiet']) await createTenant(slug);

  // alpha: one event of each kind at the edges of the windows (now is 10:30 on 2026-11-23).
  await send('alpha', [
    { id: 'a1', ts: '2026-11-23T10:10:00Z', path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: 't13d1516h2_8daaf6152771_02713d6af862' },
    { id: 'a2', ts: '2026-11-23T10:20:00Z', path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: '198.51.100.77', country: 'DE', asn: 3320 },
    { id: 'a3', ts: '2026-11-22T11:00:00Z', path: '/q/x', ua: CHROME_UA, ip: '203.0.113.9', country: 'FR', asn: 16276 },
    { id: 'a4', ts: '2026-11-22T10:59:59.999Z', path: '/robots.txt', ua: CURL_UA, ip: '198.51.100.4' },
    { id: 'a5', ts: '2026-11-20T00:00:00Z', path: '/honeypot/topics/b', ua: GPTBOT_UA, ip: GPTBOT_IP },
    { id: 'a6', ts: '2026-11-01T00:00:00Z', path: '/q/x', ua: CHROME_UA, ip: '198.51.100.6' },
    // 4 minutes ahead of the receive time: it counts at 10:30, in the current hour.
    { id: 'a7', ts: '2026-11-23T10:34:00Z', path: '/agents/z', ua: CHROME_UA, ip: '198.51.100.7' },
    { id: 'a8', ts: '2026-11-23T09:05:00Z', path: '/honeypot/topics/a', ua: GOOGLEBOT_UA, ip: GOOGLEBOT_IP },
  ]);
  // beta: a few events in the last day, some sharing alpha's paths and user agents.
  await send('beta', [
    { id: 'b1', ts: '2026-11-23T08:00:00Z', path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: '198.51.100.77', country: 'DE', asn: 3320 },
    { id: 'b2', ts: '2026-11-23T08:01:00Z', path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: '198.51.100.78', country: 'DE', asn: 3320 },
    { id: 'b3', ts: '2026-11-22T23:00:00Z', path: '/robots.txt', ua: CURL_UA, ip: '198.51.100.9', country: 'NL', asn: 1136 },
  ]);
});
afterAll(() => t.close());

describe('dashboard (happy)', () => {
  it('computes every KPI for one tenant and each window, as the events say', async () => {
    const day = await dashboardOf('alpha', '24h');
    // a1 a2 a3 a7 a8 are in the 24h window; a4 is 1 ms before it.
    expect(day.kpis).toEqual({
      totalEvents: 5,
      // GPTBot verified (a1), the GPTBot liar (a2), Chrome from AS16276 (a3) and from an address
      // without AS (a7): no JA4, two networks, two fingerprints; Googlebot (a8).
      uniqueFingerprints: 5,
      liarCount: 1,
      liarRatePct: 20,
      knownVerifiedCount: 2,
      attributionCoveragePct: expect.any(Number),
    });
    expect(day.uaClassBreakdown).toEqual(
      expect.arrayContaining([
        { uaClass: 'KNOWN_LLM_AGENT', count: 1 },
        { uaClass: 'LIAR', count: 1 },
        { uaClass: 'BROWSER', count: 2 },
        { uaClass: 'VERIFIED_CRAWLER', count: 1 },
      ]),
    );
    expect(day.topPaths[0]).toEqual({ path: '/honeypot/topics/a', count: 3 });
    expect(day.topVerifiedVendors).toEqual([
      { uaRaw: GOOGLEBOT_UA, count: 1 },
      { uaRaw: GPTBOT_UA, count: 1 },
    ]);
    expect(day.eventsPerHour).toHaveLength(24);
    expect(day.eventsPerHour[0]).toEqual({ bucketIso: '2026-11-22T11:00:00.000Z', count: 1 });
    expect(day.eventsPerHour[23]).toEqual({ bucketIso: '2026-11-23T10:00:00.000Z', count: 3 });
    expect(day.eventsPerHour.reduce((s: number, h: { count: number }) => s + h.count, 0)).toBe(5);

    expect((await dashboardOf('alpha', '7d')).kpis.totalEvents).toBe(7);
    const month = await dashboardOf('alpha', '30d');
    expect(month.kpis.totalEvents).toBe(8);
    expect(month.eventsPerHour).toHaveLength(720);
  });

  it('agrees with the events table for every tenant filter and window', async () => {
    await expectMatchesOracle();
    const all = await dashboardOf(null, '24h');
    expect(all.tenant).toBeNull();
    expect(all.topCountries[0]).toEqual({ countryCode: 'DE', count: 3 });
  });

  it('defaults to the 24h window', async () => {
    const res = await get(`${V1}/honeypot/dashboard?tenant=alpha`);
    expect(res.json().window).toBe('24h');
    expect(res.json().kpis.totalEvents).toBe(5);
  });
});

describe('clusters', () => {
  it('groups fingerprints by (ja4, class, asn), most events first, with first/last seen and a sample UA', async () => {
    const res = await get(`${V1}/honeypot/clusters?tenant=beta&window=30d`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-clusters.v1', tenant: 'beta', window: '30d' });
    // Each cluster here has one member, so its sample fingerprint is the one of its events.
    const fingerprintOf = async (uaClass: string) =>
      (
        await query<{ f: string }>(sql`SELECT DISTINCT fingerprint_id AS f FROM honeypot_events
          WHERE tenant_id = (SELECT id FROM honeypot_tenants WHERE slug = 'beta') AND ua_class = ${uaClass}`)
      ).map((r) => r.f);
    const liars = await fingerprintOf('LIAR');
    const bots = await fingerprintOf('UNKNOWN_BOT');
    expect([liars.length, bots.length]).toEqual([1, 1]);
    const [liarFingerprint, botFingerprint] = [liars[0], bots[0]];
    expect(body.clusters).toEqual([
      {
        ja4: null,
        uaClass: 'LIAR',
        asn: 3320,
        eventCount: 2,
        fingerprintCount: 1,
        firstSeen: '2026-11-23T08:00:00.000Z',
        lastSeen: '2026-11-23T08:01:00.000Z',
        sampleUa: GPTBOT_UA,
        sampleFingerprintId: liarFingerprint,
      },
      {
        ja4: null,
        uaClass: 'UNKNOWN_BOT',
        asn: 1136,
        eventCount: 1,
        fingerprintCount: 1,
        firstSeen: '2026-11-22T23:00:00.000Z',
        lastSeen: '2026-11-22T23:00:00.000Z',
        sampleUa: CURL_UA,
        sampleFingerprintId: botFingerprint,
      },
    ]);
  });

  it('counts distinct fingerprints per cluster across tenants and agrees with the events table', async () => {
    for (const window of ['24h', '7d', '30d'] as const) {
      const from = windowStart(window, clock.now()).toISOString();
      const expected = await query<Record<string, unknown>>(sql`SELECT coalesce(ja4, '') AS ja4, ua_class AS "uaClass", coalesce(asn, -1) AS asn,
          count(*)::int AS "eventCount", count(DISTINCT fingerprint_id)::int AS "fingerprintCount"
        FROM honeypot_events WHERE least(ts, received_at) >= ${from}::timestamptz
        GROUP BY coalesce(ja4, ''), ua_class, coalesce(asn, -1)
        ORDER BY 4 DESC, encode(substring(sha256(convert_to(coalesce(ja4, '') || '|' || ua_class || '|' || coalesce(asn, -1)::text, 'UTF8'))
          from 1 for 16), 'hex')`);
      const got = (await get(`${V1}/honeypot/clusters?window=${window}`)).json().clusters;
      expect(got.map(({ ja4, uaClass, asn, eventCount, fingerprintCount }: Record<string, unknown>) => ({ ja4, uaClass, asn, eventCount, fingerprintCount }))).toEqual(
        expected.map((e) => ({ ...e, ja4: e.ja4 === '' ? null : e.ja4, asn: Number(e.asn) === -1 ? null : Number(e.asn) })),
      );
    }
    const liars = (await get(`${V1}/honeypot/clusters?window=24h`)).json().clusters.find((c: { uaClass: string; asn: number }) => c.uaClass === 'LIAR');
    // alpha's a2 and beta's b1, b2: one fingerprint (same UA, no JA4), two tenants, three events.
    expect(liars).toMatchObject({ eventCount: 3, fingerprintCount: 1, firstSeen: '2026-11-23T08:00:00.000Z', lastSeen: '2026-11-23T10:20:00.000Z' });
  });

  it('caps the list', async () => {
    await send(
      'quiet',
      Array.from({ length: CLUSTER_LIMIT + 5 }, (_, i) => ({ ts: hoursAgo(100), path: '/x', ua: CURL_UA, ip: '198.51.100.1', asn: 64512 + i })),
    );
    const res = await get(`${V1}/honeypot/clusters?tenant=quiet&window=7d`);
    expect(res.json().clusters).toHaveLength(CLUSTER_LIMIT);
    expect((await get(`${V1}/honeypot/clusters?tenant=quiet&window=24h`)).json().clusters).toEqual([]);
  });
});

describe('windows move with the clock', () => {
  it('subtracts the hour that left each window, also for events ingested before the move', async () => {
    clock.set('2026-11-23T11:30:00.000Z');
    // Ingested before any read moves the windows: it lands in an hour that has just left the 24h window.
    await send('alpha', [{ id: 'a9', ts: '2026-11-22T11:15:00Z', path: '/late', ua: CURL_UA, ip: '198.51.100.9' }]);
    const day = await dashboardOf('alpha', '24h');
    expect(day.eventsPerHour[0].bucketIso).toBe('2026-11-22T12:00:00.000Z');
    expect(day.kpis.totalEvents).toBe(4); // a1 a2 a7 a8; a3 and a9 are in the hour that left
    expect((await dashboardOf('alpha', '7d')).kpis.totalEvents).toBe(8);
    await expectMatchesOracle();
    await expectRebuildChangesNothing();
  });

  it('is moved by the hourly job too, and forgets rows with nothing left in 30 days', async () => {
    clock.set('2026-11-30T01:00:00.000Z');
    const run = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` });
    expect(run.json().run.stats).toMatchObject({ advanced: true, from24h: '2026-11-29T02:00:00.000Z', from30d: '2026-10-31T02:00:00.000Z' });
    const again = await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` });
    expect(again.json().run.stats.advanced).toBe(false);
    clock.set('2026-12-01T01:00:00.000Z'); // the 30d window now starts 2026-11-01T02:00: a6 leaves it
    await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` });
    const stale = await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM honeypot_rollup_dims WHERE value = '/q/x'`);
    // a3 (2026-11-22) keeps /q/x alive for alpha; nothing else holds a zero row.
    expect(stale[0]!.n).toBe(1);
    expect((await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM honeypot_rollup_dims WHERE events_30d <= 0`))[0]!.n).toBe(0);
    await expectMatchesOracle();
    await expectRebuildChangesNothing();
  });

  it('keeps the first seen of a cluster member whose events all left the 30-day window, when it comes back', async () => {
    const member = { path: '/q/z', ua: CHROME_UA, ip: '198.51.100.60', ja4: 't13d0000h2_000000000000_000000000000' };
    const clusters = async () => {
      const res = await get(`${V1}/honeypot/clusters?tenant=alpha&window=30d`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().clusters as Record<string, unknown>[];
    };
    const cluster = async () => (await clusters()).find((c) => c.ja4 === member.ja4);
    // A client seen once, just inside the 30-day window (which starts at 2026-11-01T02:00 now)...
    await send('alpha', [{ id: 'a10', ts: '2026-11-01T03:00:00Z', ...member }]);
    expect(await cluster()).toMatchObject({ eventCount: 1, firstSeen: '2026-11-01T03:00:00.000Z' });
    // ...whose event leaves the window two hours later, its member row with it...
    clock.set('2026-12-01T03:00:00.000Z');
    await t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` });
    expect(await cluster()).toBeUndefined();
    // ...comes back (dated before the 14 days the heartbeat below looks at, so alpha keeps no baseline):
    // its history still starts at its first event.
    await send('alpha', [{ id: 'a11', ts: '2026-11-20T00:30:00Z', ...member }]);
    expect(await cluster()).toMatchObject({ eventCount: 1, fingerprintCount: 1, firstSeen: '2026-11-01T03:00:00.000Z', lastSeen: '2026-11-20T00:30:00.000Z' });
    const incremental = await clusters();
    await expectRebuildChangesNothing();
    expect(await clusters()).toEqual(incremental);
  });

  it('merges a member\'s times over batches, an event older than the window included', async () => {
    // The clock is 2026-12-01T03:00: the 30-day window starts at 2026-11-01T04:00, and ingest takes
    // events up to 30 days old, so an event at 03:30 is stored but older than the window.
    const member = { path: '/q/w', ip: '198.51.100.61', ja4: 't13d0000h2_000000000000_000000000001' };
    const newerChrome = CHROME_UA.replace('Chrome/131.0.0.0', 'Chrome/132.0.0.0');
    const cluster = async () => {
      const res = await get(`${V1}/honeypot/clusters?tenant=alpha&window=30d`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().clusters as Record<string, unknown>[]).find((c) => c.ja4 === member.ja4);
    };
    // Each read applies what is pending first, so every send below is its own batch.
    await send('alpha', [{ id: 'a12', ts: '2026-11-01T03:30:00Z', ua: CHROME_UA, ...member }]);
    expect(await cluster()).toBeUndefined();
    await send('alpha', [{ id: 'a13', ts: '2026-11-15T00:00:00Z', ua: CHROME_UA, ...member }]);
    expect(await cluster()).toMatchObject({ eventCount: 1, firstSeen: '2026-11-01T03:30:00.000Z', lastSeen: '2026-11-15T00:00:00.000Z', sampleUa: CHROME_UA });
    // A newer browser version normalises alike: the same member, whose latest UA is now the newer one.
    await send('alpha', [{ id: 'a14', ts: '2026-11-16T00:00:00Z', ua: newerChrome, ...member }]);
    expect(await cluster()).toMatchObject({ eventCount: 2, firstSeen: '2026-11-01T03:30:00.000Z', lastSeen: '2026-11-16T00:00:00.000Z', sampleUa: newerChrome });
    await expectRebuildChangesNothing();
  });
});

describe('fleet and heartbeat', () => {
  beforeAll(async () => {
    clock.set('2026-12-10T12:30:00.000Z');
    const daily = (slug: string, perDay: number, fromDay: number, toDay: number) =>
      send(
        slug,
        Array.from({ length: (toDay - fromDay) * perDay }, (_, i) => ({
          ts: hoursAgo(fromDay * 24 + (i * 24) / perDay + 0.1),
          path: `/p/${i % 7}`,
          ua: CHROME_UA,
          ip: '198.51.100.20',
        })),
      );
    // steady: 30 a day in the 7 days before the 24h window, then 2 events 3 hours ago.
    await daily('steady', 30, 1, 8);
    await send('steady', [
      { ts: hoursAgo(3), path: '/', ua: CURL_UA, ip: '198.51.100.21' },
      { ts: hoursAgo(3), path: '/', ua: CURL_UA, ip: '198.51.100.21' },
    ]);
    // busy: 30 a day before and 30 in the last day, the newest 10 minutes ago.
    await daily('busy', 30, 1, 8);
    await daily('busy', 30, 0, 1);
    await send('busy', [{ ts: iso(clock.now().getTime() - 10 * 60_000), path: '/', ua: CURL_UA, ip: '198.51.100.22' }]);
    // gone: as steady, then disabled.
    await daily('gone', 30, 1, 8);
    await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/gone/disable` });
  });

  it('counts each tenant per window and raises the cadence alarm on a drop', async () => {
    const res = await get(`${V1}/honeypot/fleet`);
    expect(res.statusCode, res.body).toBe(200);
    const bySlug = new Map<string, Record<string, unknown>>(res.json().tenants.map((x: { slug: string }) => [x.slug, x]));
    // agent-api is the public agent API's recording tenant, created at start-up (docs/agent-api/README.md).
    expect([...bySlug.keys()]).toEqual(['agent-api', 'alpha', 'beta', 'busy', 'gone', 'quiet', 'steady']);
    // steady's daily events are 24.1 h to 191.3 h old: 180 of them in the 7d window (at most 167.5 h), all 210 in the 7 days before.
    expect(bySlug.get('steady')).toMatchObject({ disabled: false, events24h: 2, events7d: 182, events30d: 212, cadenceAlarm: true, baselineDailyAvg: 30 });
    expect(bySlug.get('steady')).toMatchObject({ cadenceReason: expect.stringMatching(/^below cadence: 2 events in the last 24 h/) });
    expect(bySlug.get('busy')).toMatchObject({ events24h: 31, cadenceAlarm: false, cadenceReason: expect.stringMatching(/^ok:/) });
    expect(bySlug.get('gone')).toMatchObject({ disabled: true, cadenceAlarm: false, cadenceReason: expect.stringMatching(/^disabled/) });
    expect(bySlug.get('alpha')).toMatchObject({ cadenceAlarm: false, cadenceReason: expect.stringMatching(/^no baseline/), events24h: 0 });
    expect(bySlug.get('busy')).toMatchObject({ lastSeenAt: '2026-12-10T12:24:00.000Z' }); // its newest daily event, 0.1 h old
    // Each count agrees with the events table.
    for (const [slug, row] of bySlug) {
      const [counts] = await query<Record<string, number>>(sql`SELECT
          count(*) FILTER (WHERE least(ts, received_at) >= ${windowStart('24h', clock.now()).toISOString()}::timestamptz)::int AS d,
          count(*) FILTER (WHERE least(ts, received_at) >= ${windowStart('7d', clock.now()).toISOString()}::timestamptz)::int AS w,
          count(*) FILTER (WHERE least(ts, received_at) >= ${windowStart('30d', clock.now()).toISOString()}::timestamptz)::int AS m
        FROM honeypot_events WHERE tenant_id = (SELECT id FROM honeypot_tenants WHERE slug = ${slug})`);
      expect(row, slug).toMatchObject({ events24h: counts!.d, events7d: counts!.w, events30d: counts!.m });
    }
  });

  it('lists enabled tenants silent for the last hour whose 14-day baseline is not zero', async () => {
    const res = await get(`${V1}/honeypot/ops/heartbeat`);
    expect(res.statusCode, res.body).toBe(200);
    const silent = res.json().silentTenants;
    // steady: silent for 3 h with a baseline. busy: an event 6 minutes ago. gone: disabled. alpha, beta
    // and quiet: no event in the 14 days before the current hour (theirs are from November 23 or before).
    expect(silent.map((s: { slug: string }) => s.slug)).toEqual(['steady']);
    expect(silent.find((s: { slug: string }) => s.slug === 'steady')).toEqual({
      slug: 'steady',
      name: 'Tenant steady',
      lastSeenAt: '2026-12-10T09:30:00.000Z',
      lastHourCount: 0,
      baselineEvents14d: 212,
      baselineHourlyAvg: Math.round((212 / 336) * 1000) / 1000,
      baselineFromIso: '2026-11-26T12:00:00.000Z',
    });
    clock.advance(59 * 60_000); // 13:29: busy's newest event (12:24) is 65 minutes old
    const later = (await get(`${V1}/honeypot/ops/heartbeat`)).json().silentTenants.map((s: { slug: string }) => s.slug);
    expect(later).toEqual(['busy', 'steady']);
    clock.set('2026-12-10T12:30:00.000Z');
  });
});

describe('db health', () => {
  it('reports exact counts, the sample span and a measured dashboard time', async () => {
    const res = await get(`${V1}/honeypot/ops/db-health`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const [truth] = await query<Record<string, unknown>>(sql`SELECT (SELECT count(*) FROM honeypot_events)::int AS events,
        (SELECT count(*) FROM honeypot_fingerprints)::int AS fps, (SELECT count(*) FROM ingest_samples)::int AS samples,
        (SELECT count(*) FROM honeypot_events WHERE least(ts, received_at) >= ${windowStart('24h', clock.now()).toISOString()}::timestamptz)::int AS day,
        (SELECT min(received_at) FROM ingest_samples) AS oldest, (SELECT max(received_at) FROM ingest_samples) AS newest`);
    expect(body).toMatchObject({
      schema: 'svc-observatory-ops-db-health.v1',
      honeypotEventCount: truth!.events,
      fingerprintCount: truth!.fps,
      ingestSampleCount: truth!.samples,
      honeypotEvent24hCount: truth!.day,
      oldestSampleIso: new Date(String(truth!.oldest instanceof Date ? truth!.oldest.toISOString() : truth!.oldest)).toISOString(),
      newestSampleIso: new Date(String(truth!.newest instanceof Date ? truth!.newest.toISOString() : truth!.newest)).toISOString(),
      estimatedFields: [],
    });
    expect(body.honeypotEventCount).toBeGreaterThan(500);
    expect(body.dashboardQueryMs).toBeGreaterThan(0);
  });
});

describe('concurrent ingest', () => {
  it('keeps the rollups equal to a rebuild when batches race each other and the window advance', async () => {
    clock.set('2026-12-10T12:59:00.000Z');
    const batch = (n: number, k: number) =>
      Array.from({ length: n }, (_, i) => ({
        ts: hoursAgo((i * 7) % 40),
        path: `/race/${(i + k) % 5}`,
        ua: i % 3 === 0 ? GPTBOT_UA : CHROME_UA,
        ip: i % 2 === 0 ? GPTBOT_IP : '198.51.100.30',
        ja4: i % 4 === 0 ? 't13d1516h2_8daaf6152771_02713d6af862' : null,
        country: i % 5 === 0 ? null : 'SE',
      }));
    const sends = Array.from({ length: 12 }, (_, k) => send(k % 2 === 0 ? 'busy' : 'beta', batch(40, k)));
    clock.set('2026-12-10T13:00:30.000Z');
    const advances = [1, 2].map(() => t.call({ method: 'POST', url: `${V1}/ops/jobs/honeypot-rollup-advance/run` }));
    await Promise.all([...sends, ...advances]);
    await expectMatchesOracle();
    await expectRebuildChangesNothing();
  });
});

describe('errors', () => {
  it('refuses a window that is not 24h, 7d or 30d with 400 invalid-query', async () => {
    for (const url of [`${V1}/honeypot/dashboard?window=1h`, `${V1}/honeypot/clusters?window=90d`, `${V1}/honeypot/dashboard?window=`]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    }
  });

  it('refuses a tenant that is not a slug with 400 and an unknown one with 404', async () => {
    expect((await get(`${V1}/honeypot/dashboard?tenant=Not%20A%20Slug`)).statusCode).toBe(400);
    for (const url of [`${V1}/honeypot/dashboard?tenant=nobody`, `${V1}/honeypot/clusters?tenant=nobody&window=7d`]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    }
  });
});

describe('security', () => {
  it('asks read:dashboard for the dashboard, fleet, heartbeat and db-health, and read:clusters for clusters', async () => {
    const dashboardOnly = await t.tokenWith(['read:dashboard']);
    const clustersOnly = await t.tokenWith(['read:clusters']);
    const dashboardReads = [`${V1}/honeypot/dashboard`, `${V1}/honeypot/fleet`, `${V1}/honeypot/ops/heartbeat`, `${V1}/honeypot/ops/db-health`];
    for (const url of dashboardReads) {
      expect((await get(url, dashboardOnly)).statusCode, url).toBe(200);
      const refused = await get(url, clustersOnly);
      expect(refused.statusCode, url).toBe(403);
      expect((await t.call({ method: 'GET', url, token: null })).statusCode, url).toBe(401);
    }
    expect((await get(`${V1}/honeypot/clusters`, clustersOnly)).statusCode).toBe(200);
    expect((await get(`${V1}/honeypot/clusters`, dashboardOnly)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/honeypot/clusters`, token: null })).statusCode).toBe(401);
  });
});
