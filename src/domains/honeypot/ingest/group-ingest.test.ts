import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../../app.ts';
import { loadConfig } from '../../../platform/config.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, testEnv, V1 } from '../../../../test/helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { signatureHeader } from './signature.ts';

/**
 * Group commit end to end (docs/honeypot/README.md, "Group commit"): concurrent requests share one
 * statement, and still each get exactly their own answer, duplicates included.
 */
let t: TestApp;
const secrets = new Map<string, string>();

const now = () => Math.floor(Date.now() / 1000);
function send(slug: string, events: Record<string, unknown>[], secret = secrets.get(slug)!) {
  return signedIngest(t, { slug, secret, unixSeconds: now(), body: { events } });
}
async function query<T>(q: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await t.app.database.db.execute(q));
}
const event = (id: string, extra: Record<string, unknown> = {}) => ({ id, path: `/honeypot/topics/${id}`, ua: CHROME_UA, ip: '198.51.100.20', ...extra });

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_LIAR_THRESHOLD: '5' } });
  for (const slug of ['group-a', 'group-b']) secrets.set(slug, await createTenant(t, slug));
});
afterAll(() => t?.close());

describe('group commit', () => {
  it('writes concurrent requests together and answers each with its own events', async () => {
    const before = t.app.honeypot.ingest.groupStats();
    const res = await Promise.all(Array.from({ length: 30 }, (_, i) => send('group-a', [event(`c-${i}`)])));
    expect(res.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
    const stats = t.app.honeypot.ingest.groupStats();
    expect(stats.items - before.items).toBe(30);
    expect(stats.groups - before.groups).toBeLessThan(30);
    const stored = new Map(
      (await query<{ id: string; sender_id: string }>(sql`SELECT id, sender_id FROM honeypot_events WHERE sender_id LIKE 'c-%'`)).map((r) => [r.sender_id, r.id]),
    );
    expect(stored.size).toBe(30);
    res.forEach((r, i) => {
      expect(r.json()).toMatchObject({ accepted: 1, duplicates: 0, events: [{ id: `c-${i}`, eventId: stored.get(`c-${i}`) }] });
    });
  });

  it('stores an id sent by several concurrent requests once, answering the others as duplicates of it', async () => {
    const res = await Promise.all(Array.from({ length: 6 }, () => send('group-a', [event('same-id')])));
    const bodies = res.map((r) => r.json());
    expect(bodies.filter((b) => b.accepted === 1)).toHaveLength(1);
    expect(bodies.filter((b) => b.duplicates === 1)).toHaveLength(5);
    expect(new Set(bodies.map((b) => b.events[0].eventId)).size).toBe(1);
    expect(await query(sql`SELECT id FROM honeypot_events WHERE sender_id = 'same-id'`)).toHaveLength(1);
  });

  it('stores the new events of a group that also repeats a stored id, and counts only what it stored', async () => {
    const first = await send('group-a', [event('stored-before')]);
    const original = first.json().events[0].eventId;
    const [repeating, fresh] = await Promise.all([
      send('group-a', [event('stored-before'), event('new-1')]),
      send('group-a', [event('new-2'), event('new-2')]),
    ]);
    expect(repeating.json()).toMatchObject({ accepted: 1, duplicates: 1, events: [{ id: 'stored-before', eventId: original }, { id: 'new-1' }] });
    expect(fresh.json()).toMatchObject({ accepted: 1, duplicates: 1 });
    const ids = await query<{ sender_id: string }>(sql`SELECT sender_id FROM honeypot_events WHERE sender_id IN ('stored-before', 'new-1', 'new-2')`);
    expect(ids.map((r) => r.sender_id).sort()).toEqual(['new-1', 'new-2', 'stored-before']);
    // Every counter holds exactly the stored events once the pending rows are applied: the hourly
    // rollup and the fingerprints.
    await t.app.honeypot.dashboard.applyPending();
    expect(await query(sql`SELECT id FROM honeypot_rollup_pending`)).toEqual([]);
    const [counts] = await query<{ events: number; hourly: number; fingerprints: number }>(sql`SELECT
        (SELECT count(*) FROM honeypot_events)::int AS events,
        (SELECT sum(events) FROM honeypot_rollup_hourly)::int AS hourly,
        (SELECT sum(event_count) FROM honeypot_fingerprints)::int AS fingerprints`);
    expect(counts).toEqual({ events: counts!.events, hourly: counts!.events, fingerprints: counts!.events });
  });

  it('keeps tenants apart within a group: one sender id under two tenants is two events', async () => {
    const [a, b] = await Promise.all([send('group-a', [event('shared-id')]), send('group-b', [event('shared-id')])]);
    expect(a.json().accepted).toBe(1);
    expect(b.json().accepted).toBe(1);
    expect(a.json().events[0].eventId).not.toBe(b.json().events[0].eventId);
    const tenants = await query<{ slug: string }>(sql`SELECT t.slug FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
      WHERE e.sender_id = 'shared-id' ORDER BY t.slug`);
    expect(tenants.map((r) => r.slug)).toEqual(['group-a', 'group-b']);
  });

  it('opens one tarpit when concurrent requests together reach the liar threshold', async () => {
    const liar = (i: number) => ({ id: `liar-${i}`, path: `/q/${i}`, ua: GPTBOT_UA, ip: '198.51.100.99', ja4: 't13d1011h2_eeeeeeeeeeee_ffffffffffff' });
    const res = await Promise.all([0, 1, 2, 3, 4].map((i) => send('group-b', [liar(i)])));
    expect(res.map((r) => r.json().events[0].uaClass)).toEqual(Array(5).fill('LIAR'));
    const rows = await query<{ reason: string; liar_event_count: number }>(sql`SELECT reason, liar_event_count FROM honeypot_tarpits WHERE active`);
    expect(rows).toEqual([{ reason: 'liar-flood:5/10min', liar_event_count: 5 }]);
    expect((await send('group-b', [liar(5)])).json().events[0].tarpit).toEqual({ active: true, delayMs: 8000 });
  });

  it('opens the tarpits of several fingerprints that reach the threshold in one request, each with its own count', async () => {
    const flood = (ja4: string, count: number, prefix: string) =>
      Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, path: `/q/${prefix}/${i}`, ua: GPTBOT_UA, ip: '198.51.100.98', ja4 }));
    const res = await send('group-a', [
      ...flood('t13d1011h2_aaaaaaaaaaaa_000000000001', 5, 'fa'),
      ...flood('t13d1011h2_aaaaaaaaaaaa_000000000002', 6, 'fb'),
      ...flood('t13d1011h2_aaaaaaaaaaaa_000000000003', 4, 'fc'),
    ]);
    const events = res.json().events as { fingerprintId: string; tarpit: { active: boolean } }[];
    const fingerprintOf = (index: number) => events[index]!.fingerprintId;
    const rows = await query<{ fingerprint_id: string; liar_event_count: number }>(
      sql`SELECT fingerprint_id, liar_event_count FROM honeypot_tarpits t JOIN honeypot_tenants n ON n.id = t.tenant_id
        WHERE t.active AND n.slug = 'group-a' ORDER BY liar_event_count`,
    );
    expect(rows).toEqual([
      { fingerprint_id: fingerprintOf(0), liar_event_count: 5 },
      { fingerprint_id: fingerprintOf(5), liar_event_count: 6 },
    ]);
    // The answer already reports the tarpits the request opened; the fingerprint below the threshold has none.
    expect(events.map((e) => e.tarpit.active)).toEqual([...Array(11).fill(true), ...Array(4).fill(false)]);
  });
});

describe('tenant lookups across instances', () => {
  it('accepts at once a secret rotated on another instance (a failed signature reads the tenant again)', async () => {
    expect((await send('group-b', [event('before-rotation')])).statusCode).toBe(200);
    const other = await t.secondInstance();
    const rotated = await other.server.inject({
      method: 'POST',
      url: `${V1}/honeypot/tenants/group-b/rotate-secret`,
      headers: { authorization: `Bearer ${testEnv().OBSERVATORY_ADMIN_TOKEN}` },
    });
    const secret = rotated.json().signingSecret as string;
    expect((await send('group-b', [event('after-rotation')], secret)).statusCode).toBe(200);
    expect((await send('group-b', [event('after-rotation-2')], 'whsec_not-the-secret')).json().reason).toBe('bad-signature');
    secrets.set('group-b', secret);
  });
});

describe('shutdown', () => {
  it('writes buffered ingest samples when the app closes', async () => {
    const countSamples = async () => (await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ingest_samples`))[0]!.n;
    await t.app.honeypot.ingest.flushSamples();
    const before = await countSamples();
    const database = await t.testDb.open();
    const other = await createApp({ config: loadConfig(testEnv()), database, logger: pino({ level: 'silent' }) });
    const raw = JSON.stringify({ events: [event('at-shutdown')] });
    const res = await other.server.inject({
      method: 'POST',
      url: '/api/observatory/honeypot/ingest',
      payload: raw,
      headers: { 'content-type': 'application/json', 'x-observatory-tenant': 'group-a', 'x-observatory-signature': signatureHeader(secrets.get('group-a')!, now(), raw) },
    });
    expect(res.statusCode, res.body).toBe(200);
    await other.close(); // the database is lent, and stays open for the check below
    expect(await countSamples()).toBe(before + 1);
  });
});
