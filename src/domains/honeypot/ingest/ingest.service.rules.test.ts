import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/helpers/app.ts';
import { createTenant } from '../../../../test/helpers/honeypot.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { SLO_SAMPLE_RETENTION_MS } from '../../../platform/db/retention.ts';
import { isUniqueViolation } from '../../../platform/db/transaction.ts';
import { ServiceError } from '../../../platform/errors.ts';
import { eventTimeProblem } from '../../../platform/event-time.ts';
import { fingerprintOf, hashIp } from '../enrichment/fingerprint.ts';
import { isValidIp } from '../enrichment/ip.ts';
import { createIngestService, type IngestDeps, type IngestEvent } from './service.ts';
import * as repo from './repository.ts';
import { derivedEventId, replayKeyOf, signatureHeader } from './signature.ts';
import { findTenantBySlug, type TenantRow } from '../tenants/repository.ts';

// The ingest service's own rules (docs/honeypot/README.md, "Ingest"), on a real database but with its
// ports under the test's control: which tenant row each read returns, what the classifier and the
// GeoIP data say, and whether the rollup applier is told. The app only creates the tenants.

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
let db: Db;
let tenant: TenantRow;
let secret: string;

let started: Promise<TestApp> | undefined;
async function startOnce(): Promise<TestApp> {
  const app = await startTestApp({ clock });
  secret = await createTenant(app, 'rules');
  db = app.app.database.db;
  tenant = (await findTenantBySlug(db, 'rules'))!;
  return app;
}
// The app starts in beforeEach (memoised), not beforeAll: see ingest.rules.test.ts.
beforeEach(async () => {
  t = await (started ??= startOnce());
}, 180_000);
afterAll(async () => (await started?.catch(() => undefined))?.close());

/** Addresses the classifier calls LIAR; any other is UNKNOWN. */
const LIAR_IP = '198.51.100.66';
/** What the fake GeoIP data knows. */
const GEO: Record<string, { country: string | null; asn: number | null }> = {
  '8.8.8.8': { country: 'US', asn: 15169 },
  '8.8.4.4': { country: 'US', asn: 15169 },
  '192.0.2.7': { country: 'NL', asn: null },
};

const silentLog = { warn() {}, info() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silentLog } as unknown as FastifyBaseLogger;

function service(over: Partial<IngestDeps> = {}, options: { applier?: boolean } = {}) {
  const seen = { classified: 0, located: [] as string[], pending: 0, reads: [] as [string, boolean][] };
  const deps: IngestDeps = {
    db,
    clock,
    log: silentLog,
    classifier: {
      classify: ({ ip }) => {
        seen.classified += 1;
        return { uaClass: ip === LIAR_IP ? 'LIAR' : 'UNKNOWN', vendorId: null, proof: null, evidence: {} };
      },
    },
    geo: {
      lookup: (ip) => {
        seen.located.push(ip);
        return GEO[ip] ?? { country: null, asn: null };
      },
    },
    fingerprints: { fingerprintOf, hashIp, isValidIp },
    tenantBySlug: async (slug, fresh) => {
      seen.reads.push([slug, fresh]);
      return findTenantBySlug(db, slug);
    },
    ipHashKey: () => 'test-ip-hash-key',
    liarThreshold: 5,
    tarpitTtlMinutes: 30,
    onPending: () => {
      seen.pending += 1;
    },
    ...over,
  };
  if (options.applier === false) delete deps.onPending;
  return { ingest: createIngestService(deps), seen };
}

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    const { status, reason, message, details } = error as ServiceError;
    return { status, reason, message, details };
  }
  throw new Error('not refused');
}

const query = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(q));
const unixNow = () => Math.floor(clock.now().getTime() / 1000);
const ev = (id: string | undefined, extra: Partial<IngestEvent> = {}): IngestEvent => ({ ...(id === undefined ? {} : { id }), path: '/', ip: '203.0.113.9', ...extra });

/** A trigger on the events table for one test: raises for some paths, counts INSERT statements. */
async function withTrigger<T>(run: (statements: () => Promise<number>) => Promise<T>): Promise<T> {
  await db.execute(sql.raw('CREATE SEQUENCE test_insert_statements MINVALUE 0 START 0'));
  await db.execute(sql.raw('CREATE SEQUENCE test_conflicts MINVALUE 0 START 0'));
  await db.execute(sql.raw(`CREATE FUNCTION test_count_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM nextval('test_insert_statements'); RETURN NULL; END $$`));
  await db.execute(sql.raw(`CREATE FUNCTION test_refuse_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- A conflict that no stored original explains (a racing writer, again and again), ten times.
      IF NEW.path = '/always-conflicts' AND nextval('test_conflicts') <= 10 THEN
        RAISE EXCEPTION 'test: conflict' USING ERRCODE = 'unique_violation';
      END IF;
      IF NEW.path = '/poison' THEN RAISE EXCEPTION 'test: a row that cannot be stored' USING ERRCODE = 'check_violation'; END IF;
      IF NEW.path = '/database-down' THEN RAISE EXCEPTION 'test: connection failure' USING ERRCODE = '08006'; END IF;
      RETURN NEW;
    END $$`));
  await db.execute(sql.raw('CREATE TRIGGER test_count_inserts BEFORE INSERT ON honeypot_events FOR EACH STATEMENT EXECUTE FUNCTION test_count_inserts()'));
  await db.execute(sql.raw('CREATE TRIGGER test_refuse_rows BEFORE INSERT ON honeypot_events FOR EACH ROW EXECUTE FUNCTION test_refuse_rows()'));
  const statements = async () => {
    const [row] = await query<{ n: string | number }>(sql.raw(`SELECT CASE WHEN is_called THEN last_value + 1 ELSE 0 END AS n FROM test_insert_statements`));
    return Number(row!.n);
  };
  try {
    return await run(statements);
  } finally {
    await db.execute(sql.raw('DROP TRIGGER test_count_inserts ON honeypot_events'));
    await db.execute(sql.raw('DROP TRIGGER test_refuse_rows ON honeypot_events'));
    await db.execute(sql.raw('DROP FUNCTION test_count_inserts()'));
    await db.execute(sql.raw('DROP FUNCTION test_refuse_rows()'));
    await db.execute(sql.raw('DROP SEQUENCE test_insert_statements'));
    await db.execute(sql.raw('DROP SEQUENCE test_conflicts'));
  }
}

describe('verify', () => {
  const raw = JSON.stringify({ events: [ev('v-1')] });
  const signed = (key = secret, at = unixNow()) => signatureHeader(key, at, raw);
  /** Reads answer `cached` for a cached read (fresh = false) and `fresh` for a fresh one. */
  const reading = (cached: TenantRow | null, fresh: TenantRow | null) =>
    service({ tenantBySlug: async (_slug, isFresh) => (isFresh ? fresh : cached) });

  it('takes the tenant from a cached read when the signature verifies there, reading nothing more', async () => {
    const { ingest, seen } = service();
    const header = signed();
    const verified = await ingest.verify('rules', header, raw);
    expect(verified).toEqual({ tenant, replayKey: replayKeyOf(unixNow(), raw) });
    expect(seen.reads).toEqual([['rules', false]]);
  });

  it('checks a signature that fails against the cached row once more against a fresh read (a secret rotated elsewhere)', async () => {
    const stale = { ...tenant, signingSecret: 'whsec_rotated-away', previousSecret: null, previousValidUntil: null };
    const reads: boolean[] = [];
    const { ingest } = service({
      tenantBySlug: async (_slug, fresh) => {
        reads.push(fresh);
        return fresh ? tenant : stale;
      },
    });
    expect((await ingest.verify('rules', signed(), raw)).tenant).toEqual(tenant);
    expect(reads).toEqual([false, true]);
    // Still failing against the fresh row: bad-signature, after exactly those two reads.
    reads.length = 0;
    expect(await refusal(ingest.verify('rules', signed('whsec_not-the-secret'), raw))).toEqual({
      status: 401,
      reason: 'bad-signature',
      message:
        'The signature does not verify under the tenant\'s signing secret. v1 is the hex HMAC-SHA256 of "<t>.<raw body>" keyed by the whole whsec_… secret as text, not base64-decoded as Standard Webhooks does; see docs/honeypot/README.md.',
      details: {},
    });
    expect(reads).toEqual([false, true]);
  });

  it('refuses a tenant that the fresh read no longer finds as unknown', async () => {
    const { ingest } = reading({ ...tenant, signingSecret: 'whsec_rotated-away', previousSecret: null, previousValidUntil: null }, null);
    expect(await refusal(ingest.verify('rules', signed(), raw))).toEqual({ status: 401, reason: 'unknown-tenant', message: 'No tenant has that slug.', details: {} });
  });

  it('refuses a missing or unknown slug, a stale timestamp and a disabled tenant with their own reasons', async () => {
    const { ingest, seen } = service();
    const unknown = { status: 401, reason: 'unknown-tenant', message: 'No tenant has that slug.', details: {} };
    expect(await refusal(ingest.verify(undefined, signed(), raw))).toEqual(unknown);
    expect(seen.reads).toEqual([]);
    expect(await refusal(ingest.verify('nobody', signed(), raw))).toEqual(unknown);
    expect(await refusal(ingest.verify('rules', signed(secret, unixNow() - 301), raw))).toEqual({
      status: 401,
      reason: 'stale-signature',
      message: 'The signature timestamp is more than 300 seconds from the server clock.',
      details: {},
    });
    const disabled = reading({ ...tenant, disabledAt: clock.now() }, null);
    expect(await refusal(disabled.ingest.verify('rules', signed(), raw))).toEqual({
      status: 403,
      reason: 'tenant-disabled',
      message: 'Tenant rules is disabled; its events are refused.',
      details: {},
    });
  });
});

describe('the bounds of each event', () => {
  it('refuses an address that is not IPv4 or IPv6, naming the event', async () => {
    const { ingest } = service();
    expect(await refusal(ingest.ingest(tenant, { events: [ev('b-1'), ev('b-2', { ip: 'not-an-ip' })] }))).toEqual({
      status: 400,
      reason: 'invalid-body',
      message: 'body.events[1].ip is not an IPv4 or IPv6 address.',
      details: { field: 'body.events[1].ip' },
    });
  });

  it('refuses a time more than 30 days back or 5 minutes ahead, naming the event and the limits', async () => {
    const { ingest } = service();
    const old = new Date(clock.now().getTime() - 31 * 86_400_000).toISOString();
    expect(eventTimeProblem(old, clock.now())).toBe('is more than 30 days in the past');
    expect(await refusal(ingest.ingest(tenant, { events: [ev('b-3'), ev('b-4'), ev('b-5', { ts: old })] }))).toEqual({
      status: 400,
      reason: 'invalid-body',
      message: 'body.events[2].ts is more than 30 days in the past; it must be at most 30 days in the past and 5 minutes in the future.',
      details: { field: 'body.events[2].ts' },
    });
    expect(await query(sql`SELECT id FROM honeypot_events WHERE sender_id IN ('b-1', 'b-2', 'b-3', 'b-4', 'b-5')`)).toEqual([]);
  });
});

describe('what is stored of an event', () => {
  type Stored = { sender_id: string; method: string; country: string | null; asn: string | number | null; attribution_source: string | null; query: string | null; ja4: string | null; referer: string | null };
  const stored = async (prefix: string) =>
    Object.fromEntries(
      (await query<Stored>(sql`SELECT sender_id, method, country, asn, attribution_source, query, ja4, referer FROM honeypot_events WHERE sender_id LIKE ${`${prefix}%`}`)).map((r) => [
        r.sender_id,
        { ...r, asn: r.asn === null ? null : Number(r.asn) },
      ]),
    );

  it('upper-cases the method, GET when none is sent', async () => {
    const { ingest } = service();
    await ingest.ingest(tenant, { events: [ev('m-post', { method: 'post' }), ev('m-none'), ev('m-head', { method: 'HEAD' })] });
    const rows = await stored('m-');
    expect([rows['m-post']!.method, rows['m-none']!.method, rows['m-head']!.method]).toEqual(['POST', 'GET', 'HEAD']);
  });

  it('takes country and AS from the sender, fills the missing one from GeoIP, and says where they came from', async () => {
    const { ingest, seen } = service();
    await ingest.ingest(tenant, {
      events: [
        ev('a-country', { ip: '8.8.8.8', country: 'FR' }),
        ev('a-asn', { ip: '8.8.8.8', asn: 64500 }),
        ev('a-both', { ip: '8.8.4.4', country: 'FR', asn: 64500 }),
        ev('a-geoip', { ip: '8.8.8.8' }),
        ev('a-geoip-country', { ip: '192.0.2.7' }),
        ev('a-unknown', { ip: '203.0.113.9', country: null, asn: null }),
        ev('a-country-unknown-ip', { ip: '203.0.113.9', country: 'FR' }),
        ev('a-asn-unknown-ip', { ip: '203.0.113.9', asn: 64500 }),
      ],
    });
    const rows = await stored('a-');
    const attribution = Object.fromEntries(Object.entries(rows).map(([id, r]) => [id, [r.country, r.asn, r.attribution_source]]));
    expect(attribution).toEqual({
      'a-country': ['FR', 15169, 'sender'],
      'a-asn': ['US', 64500, 'sender'],
      'a-both': ['FR', 64500, 'sender'],
      'a-geoip': ['US', 15169, 'geoip'],
      'a-geoip-country': ['NL', null, 'geoip'],
      'a-unknown': [null, null, null],
      'a-country-unknown-ip': ['FR', null, 'sender'],
      'a-asn-unknown-ip': [null, 64500, 'sender'],
    });
    // GeoIP is not asked about an event whose sender gave both.
    expect(seen.located).not.toContain('8.8.4.4');
  });

  it('stores query, JA4 and referer exactly as sent, null when absent', async () => {
    const { ingest } = service();
    await ingest.ingest(tenant, {
      events: [
        ev('q-sent', { query: 'a=1&b=%20', ja4: 't13d1516h2_8daaf6152771_02713d6af862', referer: 'https://example.org/x?y' }),
        ev('q-absent'),
        ev('q-null', { query: null, ja4: null, referer: null }),
      ],
    });
    const rows = await stored('q-');
    expect([rows['q-sent'], rows['q-absent'], rows['q-null']].map((r) => [r!.query, r!.ja4, r!.referer])).toEqual([
      ['a=1&b=%20', 't13d1516h2_8daaf6152771_02713d6af862', 'https://example.org/x?y'],
      [null, null, null],
      [null, null, null],
    ]);
  });
});

describe('sender ids and duplicates', () => {
  it('gives an id-less event of a signed request the id derived from its replay key and index', async () => {
    const { ingest } = service();
    const result = await ingest.ingest(tenant, { events: [ev('own-id'), ev(undefined), ev(undefined)] }, { replayKey: 'replay-key-1' });
    const derived = [derivedEventId('replay-key-1', 1), derivedEventId('replay-key-1', 2)];
    expect(result.events.map((e) => e.id)).toEqual(['own-id', ...derived]);
    expect(result).toMatchObject({ accepted: 3, duplicates: 0 });
    const ids = await query<{ sender_id: string }>(sql`SELECT sender_id FROM honeypot_events WHERE sender_id IN (${'own-id'}, ${derived[0]}, ${derived[1]}) ORDER BY sender_id`);
    expect(ids.map((r) => r.sender_id)).toEqual(['own-id', ...derived].sort());
  });

  it('keeps id-less events without a replay key id-less, and stores each of them', async () => {
    const { ingest } = service();
    const before = (await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM honeypot_events WHERE sender_id IS NULL AND path = '/no-id'`))[0]!.n;
    const result = await ingest.ingest(tenant, { events: [ev(undefined, { path: '/no-id' }), ev(undefined, { path: '/no-id' }), ev(undefined, { path: '/no-id' })] });
    expect(result).toMatchObject({ accepted: 3, duplicates: 0 });
    expect(result.events.map((e) => e.id)).toEqual([null, null, null]);
    expect(new Set(result.events.map((e) => e.eventId)).size).toBe(3);
    expect((await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM honeypot_events WHERE sender_id IS NULL AND path = '/no-id'`))[0]!.n).toBe(before + 3);
  });

  it('classifies a repeated id of one request once, answering the repeat from its first', async () => {
    const { ingest, seen } = service();
    const result = await ingest.ingest(tenant, { events: [ev('r-a'), ev('r-b'), ev('r-a', { path: '/other' })] });
    expect(seen.classified).toBe(2);
    expect(result).toMatchObject({ accepted: 2, duplicates: 1 });
    expect(result.events[2]!.eventId).toBe(result.events[0]!.eventId);
  });

  it('does not take an id-less event for a stored event whose sender id is the text "null"', async () => {
    const { ingest } = service();
    const first = await ingest.ingest(tenant, { events: [ev('null')] });
    expect(first.accepted).toBe(1);
    const again = await ingest.ingest(tenant, { events: [ev('null'), ev(undefined, { path: '/after-null' })] });
    expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(again.events[0]!.eventId).toBe(first.events[0]!.eventId);
    expect(await query(sql`SELECT id FROM honeypot_events WHERE path = '/after-null'`)).toHaveLength(1);
  });

  it('answers a repeat of an id across the requests of one group from its first, in one statement', async () => {
    const { ingest } = service();
    await withTrigger(async (statements) => {
      const before = await statements();
      // Submitted in the same turn, the two requests share one group commit.
      const [a, b] = await Promise.all([ingest.ingest(tenant, { events: [ev('x-same')] }), ingest.ingest(tenant, { events: [ev('x-same')] })]);
      expect([a.accepted, a.duplicates, b.accepted, b.duplicates]).toEqual([1, 0, 0, 1]);
      expect(b.events[0]!.eventId).toBe(a.events[0]!.eventId);
      expect((await statements()) - before).toBe(1);
    });
  });

  it('gives up after four statements refused by a conflict that no stored event explains', async () => {
    const { ingest } = service();
    await withTrigger(async (statements) => {
      const before = await statements();
      const failure = await ingest.ingest(tenant, { events: [ev('c-1', { path: '/always-conflicts' })] }).then(() => null, (error: unknown) => error);
      expect(isUniqueViolation(failure)).toBe(true);
      expect((await statements()) - before).toBe(4);
    });
  });

  it('counts only LIAR events toward a tarpit: a fingerprint\'s other events do not look its LIAR count up', async () => {
    const ja4 = 't13d1516h2_aaaaaaaaaaaa_cccccccccccc';
    // Three LIAR events stored by an instance with a high threshold…
    const lenient = service({ liarThreshold: 100 });
    const liars = await lenient.ingest.ingest(tenant, { events: [0, 1, 2].map((i) => ev(`l-${i}`, { ip: LIAR_IP, ja4, ua: 'agent' })) });
    expect(liars.events.map((e) => e.uaClass)).toEqual(['LIAR', 'LIAR', 'LIAR']);
    // …then an UNKNOWN event of the same fingerprint at an instance whose threshold they reach.
    const strict = service({ liarThreshold: 2 });
    const other = await strict.ingest.ingest(tenant, { events: [ev('l-other', { ip: '203.0.113.50', ja4, ua: 'agent' })] });
    expect(other.events[0]).toMatchObject({ uaClass: 'UNKNOWN', fingerprintId: liars.events[0]!.fingerprintId, tarpit: { active: false, delayMs: 0 } });
    expect(await query(sql`SELECT id FROM honeypot_tarpits WHERE fingerprint_id = ${liars.events[0]!.fingerprintId}`)).toEqual([]);
  });

  it('never delays a verified event, whatever state its fingerprint is in', async () => {
    // A fingerprint keyed as before sources were told apart (JA4 and UA alone): a verified agent
    // and its impostors share it, and the impostors' flood tarpits it.
    const verifiedIp = '192.0.2.44';
    const { ingest } = service({
      liarThreshold: 3,
      classifier: {
        classify: ({ ip }) =>
          ip === verifiedIp
            ? { uaClass: 'KNOWN_LLM_AGENT', vendorId: 'openai-gptbot', proof: 'ip-range:192.0.2.0/24', evidence: {} }
            : { uaClass: 'LIAR', vendorId: 'openai-gptbot', proof: null, evidence: {} },
      },
      fingerprints: { fingerprintOf: ({ ja4, ua }) => fingerprintOf({ ja4, ua }), hashIp, isValidIp },
    });
    const shared = { ua: 'SharedBot/1.0', ja4: null };
    const flood = await ingest.ingest(tenant, { events: [0, 1, 2].map((i) => ev(`shared-liar-${i}`, { ...shared, ip: LIAR_IP })) });
    expect(flood.events.at(-1)!.tarpit).toEqual({ active: true, delayMs: 8000 });
    const mixed = await ingest.ingest(tenant, { events: [ev('shared-real-1', { ...shared, ip: verifiedIp }), ev('shared-liar-3', { ...shared, ip: LIAR_IP })] });
    expect(mixed.events.map((e) => [e.uaClass, e.fingerprintId, e.tarpit])).toEqual([
      ['KNOWN_LLM_AGENT', flood.events[0]!.fingerprintId, { active: false, delayMs: 0 }],
      ['LIAR', flood.events[0]!.fingerprintId, { active: true, delayMs: 8000 }],
    ]);
    // Sent again: answered from the stored original, still not delayed.
    const again = await ingest.ingest(tenant, { events: [ev('shared-real-1', { ...shared, ip: verifiedIp })] });
    expect(again).toMatchObject({ duplicates: 1, events: [{ uaClass: 'KNOWN_LLM_AGENT', tarpit: { active: false, delayMs: 0 } }] });
  });

  it('names each fingerprint of the stored events once, with its normalised UA, in the pending row', async () => {
    const { ingest } = service();
    const uaA = 'Mozilla/5.0 (compatible; PendingA/1.0)';
    const uaB = 'Mozilla/5.0 (compatible; PendingB/2.0)';
    const result = await ingest.ingest(tenant, { events: [ev('f-1', { ua: uaA }), ev('f-2', { ua: uaB }), ev('f-3', { ua: uaA })] });
    const [row] = await query<{ fingerprints: unknown }>(sql`SELECT fingerprints FROM honeypot_rollup_pending WHERE ${result.events[0]!.eventId}::uuid = ANY(event_ids)`);
    const fingerprints = typeof row!.fingerprints === 'string' ? JSON.parse(row!.fingerprints) : row!.fingerprints;
    // No JA4, no AS number: keyed by the address's keyed hash (docs/honeypot/enrichment.md, "Fingerprint").
    const source = { verifiedVendorId: null, asn: null, ipHash: hashIp('test-ip-hash-key', '203.0.113.9') };
    const fp = (ua: string) => fingerprintOf({ ja4: null, ua, source });
    expect(fingerprints).toEqual([
      [tenant.id, fp(uaA).fingerprintId, fp(uaA).uaNormalized],
      [tenant.id, fp(uaB).fingerprintId, fp(uaB).uaNormalized],
    ]);
  });
});

describe('after a group is written', () => {
  it('tells the rollup applier exactly when events were stored', async () => {
    const { ingest, seen } = service();
    await ingest.ingest(tenant, { events: [ev('p-1')] });
    expect(seen.pending).toBe(1);
    await ingest.ingest(tenant, { events: [ev('p-1')] });
    expect(seen.pending).toBe(1);
    // Without an applier to tell, storing works the same.
    const bare = service({}, { applier: false });
    expect((await bare.ingest.ingest(tenant, { events: [ev('p-2')] })).accepted).toBe(1);
  });

  it('holds at most 2000 events in a group: two requests of 1001 and 1000 events are two groups', async () => {
    const { ingest } = service();
    const before = ingest.groupStats().groups;
    const batch = (n: number) => ({ events: Array.from({ length: n }, () => ev(undefined, { path: '/weight' })) });
    const results = await Promise.all([ingest.ingest(tenant, batch(1001)), ingest.ingest(tenant, batch(1000))]);
    expect(results.map((r) => r.accepted)).toEqual([1001, 1000]);
    expect(ingest.groupStats().groups - before).toBe(2);
  });

  it('writes the requests of a failed group again one by one, so that one bad row fails only its request', async () => {
    const { ingest } = service();
    await withTrigger(async () => {
      const [bad, good] = await Promise.allSettled([ingest.ingest(tenant, { events: [ev('g-bad', { path: '/poison' })] }), ingest.ingest(tenant, { events: [ev('g-good')] })]);
      expect(bad.status).toBe('rejected');
      expect(good).toMatchObject({ status: 'fulfilled', value: { accepted: 1 } });
    });
  });

  it('does not write the requests of a group again when the database is unavailable', async () => {
    const { ingest } = service();
    await withTrigger(async (statements) => {
      const before = await statements();
      const settled = await Promise.allSettled([ingest.ingest(tenant, { events: [ev('u-down', { path: '/database-down' })] }), ingest.ingest(tenant, { events: [ev('u-other')] })]);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
      expect((await statements()) - before).toBe(1);
    });
  });
});

describe('ingest samples', () => {
  const sample = (slug: string, receivedAt: Date): repo.SampleRow => ({ tenantSlug: slug, receivedAt, outcome: 'ok', latencyMs: 1, eventCount: 1 });

  it('are pruned when older than the retention at the given time, and kept from the cutoff on', async () => {
    const { ingest } = service();
    const now = clock.now();
    const cutoff = now.getTime() - SLO_SAMPLE_RETENTION_MS;
    for (const offset of [-1, 0, 1]) ingest.recordSample(sample(`prune${offset}`, new Date(cutoff + offset)));
    ingest.recordSample(sample('prune-now', now));
    await ingest.flushSamples();
    expect(await ingest.pruneSamples(now)).toBe(1);
    const left = await query<{ tenant_slug: string }>(sql`SELECT tenant_slug FROM ingest_samples WHERE tenant_slug LIKE 'prune%' ORDER BY tenant_slug`);
    expect(left.map((r) => r.tenant_slug)).toEqual(['prune-now', 'prune0', 'prune1']);
  });

  it('that cannot be written are named in the warning', async () => {
    const warnings: string[] = [];
    const log = { ...silentLog, warn: (_obj: unknown, message: string) => warnings.push(message) } as unknown as FastifyBaseLogger;
    const { ingest } = service({ log });
    ingest.recordSample({ ...sample('broken', clock.now()), outcome: null as unknown as string });
    await ingest.flushSamples();
    expect(warnings).toEqual(['could not record ingest samples; keeping them for the next write']);
  });
});
