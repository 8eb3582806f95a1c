import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_UA, INGEST_PATH, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { derivedEventId, replayKeyOf, signatureHeader, signPayload } from './signature.ts';

/**
 * Replayed ingest requests (spec D3, docs/honeypot/README.md "Replayed requests"): a signature stays
 * valid for 300 s, so a captured request can be sent again inside that window. Events without a
 * sender id take an id derived from the signed request, so the replay is a duplicate.
 */
const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
const secrets = new Map<string, string>();

const unix = () => Math.floor(clock.now().getTime() / 1000);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** One captured request: its raw bytes and headers, to be sent again exactly. */
function capture(slug: string, events: Record<string, unknown>[], at = unix()) {
  const raw = JSON.stringify({ events });
  return { slug, raw, t: at, signature: signatureHeader(secrets.get(slug)!, at, raw) };
}
type Captured = ReturnType<typeof capture>;

function replay(request: Captured, signature = request.signature) {
  return t.call({
    method: 'POST',
    url: INGEST_PATH,
    token: null,
    payload: request.raw,
    headers: { 'content-type': 'application/json', 'x-observatory-tenant': request.slug, 'x-observatory-signature': signature },
  });
}

async function storedCount(slug: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(
    await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id WHERE t.slug = ${slug}`),
  );
  return row!.n;
}

async function reads(slug: string) {
  const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent`, query: { tenant: slug, limit: '100' } });
  const dashboard = await t.call({ method: 'GET', url: `${V1}/honeypot/dashboard`, query: { tenant: slug, window: '24h' } });
  expect(recent.statusCode, recent.body).toBe(200);
  expect(dashboard.statusCode, dashboard.body).toBe(200);
  return { recent: recent.json().events.length as number, kpis: dashboard.json().kpis as { totalEvents: number; liarCount: number } };
}

const browser = (n: number) => ({ path: `/honeypot/topics/replay-${n}`, ua: CHROME_UA, ip: '198.51.100.40' });
const liar = (n: number) => ({ path: `/q/liar-${n}`, ua: GPTBOT_UA, ip: '198.51.100.66', ja4: 't13d1011h2_replay000001_000000000001' });

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5', OBSERVATORY_TARPIT_TTL_MINUTES: '30' } });
  for (const slug of ['replay-site', 'replay-liars', 'replay-mixed', 'replay-test-event', 'agent-api-replay']) secrets.set(slug, await createTenant(t, slug));
});
afterAll(() => t.close());

describe('a replayed signed request', () => {
  it('is a duplicate inside the 300 s window: nothing stored again, reads do not grow', async () => {
    const captured = capture('replay-site', [browser(1), browser(2), browser(3)]);
    const first = await replay(captured);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ accepted: 3, duplicates: 0 });
    const before = await reads('replay-site');
    expect(before).toMatchObject({ recent: 3, kpis: { totalEvents: 3 } });

    for (const later of [1_000, 120_000, 299_000]) {
      clock.set(new Date(captured.t * 1000 + later));
      const again = await replay(captured);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toMatchObject({ accepted: 0, duplicates: 3 });
      // The answer names the originals, as for a resent sender id.
      expect(again.json().events).toEqual(first.json().events);
    }
    expect(await storedCount('replay-site')).toBe(3);
    expect(await reads('replay-site')).toEqual(before);

    // Past the window the signature itself is refused.
    clock.set(new Date(captured.t * 1000 + 301_000));
    expect((await replay(captured)).json()).toMatchObject({ reason: 'stale-signature' });
  });

  it('adds no LIAR events toward a tarpit', async () => {
    const captured = capture('replay-liars', [liar(1), liar(2), liar(3)]);
    expect((await replay(captured)).json()).toMatchObject({ accepted: 3, duplicates: 0 });
    for (let i = 0; i < 4; i++) {
      clock.advance(10_000);
      const again = await replay(captured);
      expect(again.json()).toMatchObject({ accepted: 0, duplicates: 3 });
      expect(again.json().events.map((e: { tarpit: { active: boolean } }) => e.tarpit.active)).toEqual([false, false, false]);
    }
    const tarpits = async () =>
      rowsOf(await t.app.database.db.execute(sql`SELECT p.id FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id WHERE t.slug = 'replay-liars'`));
    expect(await tarpits()).toHaveLength(0);
    expect((await reads('replay-liars')).kpis.liarCount).toBe(3);

    // The count is right, not stuck: two genuinely new LIAR events reach the threshold of 5.
    const fresh = await replay(capture('replay-liars', [liar(4), liar(5)]));
    expect(fresh.json()).toMatchObject({ accepted: 2, duplicates: 0 });
    expect(fresh.json().events[1].tarpit).toEqual({ active: true, delayMs: 8000 });
    expect(await tarpits()).toHaveLength(1);
  });

  it('stores the events once when copies arrive at the same time (one group commit)', async () => {
    const before = await storedCount('replay-site');
    const captured = capture('replay-site', [browser(60), browser(61)]);
    const answers = (await Promise.all(Array.from({ length: 6 }, () => replay(captured)))).map((r) => r.json());
    expect(answers.reduce((n, a) => n + a.accepted, 0)).toBe(2);
    expect(answers.reduce((n, a) => n + a.duplicates, 0)).toBe(10);
    expect(new Set(answers.map((a) => a.events[0].eventId)).size).toBe(1);
    expect(await storedCount('replay-site')).toBe(before + 2);
  });

  it('is still a duplicate when the replayer adds v1 values to the header', async () => {
    const captured = capture('replay-site', [browser(10)]);
    expect((await replay(captured)).json()).toMatchObject({ accepted: 1 });
    const v1 = signPayload(secrets.get('replay-site')!, captured.t, captured.raw);
    for (const header of [`t=${captured.t},v1=${'0'.repeat(64)},v1=${v1}`, `t=${captured.t},v1=${v1},v1=${'f'.repeat(64)}`]) {
      expect((await replay(captured, header)).json()).toMatchObject({ accepted: 0, duplicates: 1 });
    }
  });
});

describe('derived ids', () => {
  it('follow sig- + sha256("<sha256(<t>.<raw body>)>:<index>")[0..32], and leave sender ids alone', async () => {
    const captured = capture('replay-mixed', [{ id: 'edge-1', ...browser(20) }, browser(21), { id: 'edge-2', ...browser(22) }]);
    const res = await replay(captured);
    expect(res.statusCode, res.body).toBe(200);
    const key = sha256(`${captured.t}.${captured.raw}`);
    expect(replayKeyOf(captured.t, captured.raw)).toBe(key);
    const expected = `sig-${sha256(`${key}:1`).slice(0, 32)}`;
    expect(derivedEventId(key, 1)).toBe(expected);
    expect(res.json().events.map((e: { id: string }) => e.id)).toEqual(['edge-1', expected, 'edge-2']);
    const ids = rowsOf<{ sender_id: string; id: string }>(
      await t.app.database.db.execute(sql`SELECT e.sender_id, e.id FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
        WHERE t.slug = 'replay-mixed' ORDER BY e.path`),
    );
    expect(ids.map((r) => r.sender_id)).toEqual(['edge-1', expected, 'edge-2']);
    expect(ids[1]!.id).toBe(res.json().events[1].eventId);
  });

  it('store both of two identical events of one request (their positions differ)', async () => {
    const before = await storedCount('replay-mixed');
    const res = await replay(capture('replay-mixed', [browser(30), browser(30)]));
    expect(res.json()).toMatchObject({ accepted: 2, duplicates: 0 });
    const [a, b] = res.json().events as { id: string; eventId: string }[];
    expect(a!.id).not.toBe(b!.id);
    expect(a!.eventId).not.toBe(b!.eventId);
    expect(await storedCount('replay-mixed')).toBe(before + 2);
  });

  it('differ when the same body is signed again at another time (a new request, not a replay)', async () => {
    const body = [browser(40)];
    const first = await replay(capture('replay-mixed', body));
    clock.advance(1_000);
    const resent = await replay(capture('replay-mixed', body));
    expect(first.json()).toMatchObject({ accepted: 1 });
    expect(resent.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(resent.json().events[0].id).not.toBe(first.json().events[0].id);
  });

  it('collide with nothing of another tenant: the same request bytes under two tenants are two events', async () => {
    const at = unix();
    const raw = JSON.stringify({ events: [browser(50)] });
    for (const slug of ['replay-site', 'replay-mixed']) {
      const res = await signedIngest(t, { slug, secret: secrets.get(slug)!, unixSeconds: at, raw });
      expect(res.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    }
  });
});

describe('paths that share ingest', () => {
  it('the test event stores a new event on every call, even within one second', async () => {
    const before = await storedCount('replay-test-event');
    const send = () => t.call({ method: 'POST', url: `${V1}/honeypot/test-event`, payload: { tenant: 'replay-test-event' } });
    const [a, b] = [await send(), await send()];
    expect(a.statusCode, a.body).toBe(200);
    expect(b.statusCode, b.body).toBe(200);
    expect(a.json().eventId).not.toBe(b.json().eventId);
    expect(await storedCount('replay-test-event')).toBe(before + 2);
  });

  it('internal recording (the agent API) keeps its own ids, and repeats of them stay duplicates', async () => {
    const call = (id: string) => ({ id, ts: clock.now().toISOString(), method: 'GET', path: '/api/agent', query: 'query=llm', ua: CHROME_UA, ip: '203.0.113.77', referer: null, headers: {} });
    const first = await t.app.honeypot.recordEvents('agent-api-replay', [call('agent-api-1'), call('agent-api-2')]);
    expect(first).toMatchObject({ accepted: 2, duplicates: 0, events: [{ id: 'agent-api-1' }, { id: 'agent-api-2' }] });
    const retried = await t.app.honeypot.recordEvents('agent-api-replay', [call('agent-api-2'), call('agent-api-3')]);
    expect(retried).toMatchObject({ accepted: 1, duplicates: 1 });
    // Without a signed request there is nothing to derive from: an id-less event stays id-less.
    const { id: _omitted, ...anonymous } = call('unused');
    const idless = await t.app.honeypot.recordEvents('agent-api-replay', [anonymous, anonymous]);
    expect(idless).toMatchObject({ accepted: 2, duplicates: 0, events: [{ id: null }, { id: null }] });
    expect(await storedCount('agent-api-replay')).toBe(5);
  });
});
