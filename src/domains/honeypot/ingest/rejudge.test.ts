import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { startDnsServer, type TestDnsServer } from '../../../../test/helpers/dns-server.ts';
import { createTenant, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { fingerprintOf } from '../enrichment/fingerprint.ts';
import { createRegistryHolder, loadVendorRegistry } from '../vendors/registry.ts';
import type { RdnsFact } from '../vendors/reverse-dns.ts';
import { createRejudge } from './rejudge.ts';

/**
 * Forward-confirmed reverse DNS end to end: ingest answers at once on what it knows, the lookup
 * runs against a DNS server this test starts on a loopback port, and the stored events are
 * judged again when it answers, with the dashboard's rollups and the fingerprint counters moved
 * along.
 */

const AMAZONBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36';
const GOOGLEBOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const CLAUDEBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';

const clock = new ManualClock('2026-11-29T10:00:00.000Z');
let t: TestApp;
let dns: TestDnsServer;
let secret: string;
let sent = 0;

async function send(events: { ua: string; ip: string; path?: string }[]) {
  const res = await signedIngest(t, {
    slug: 'rdns-site',
    secret,
    unixSeconds: Math.floor(clock.now().getTime() / 1000),
    body: { events: events.map((e) => ({ id: `ev-${++sent}`, path: e.path ?? '/honeypot/topics/llm-pricing', ua: e.ua, ip: e.ip })) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { id: string; eventId: string; uaClass: string; fingerprintId: string }[] }>().events;
}

async function stored(eventId: string) {
  const [row] = rowsOf<{ ua_class: string; proof: string | null; fingerprint_id: string; evidence: Record<string, unknown> }>(
    await t.app.database.db.execute(sql`SELECT ua_class, proof, fingerprint_id, evidence FROM honeypot_events WHERE id = ${eventId}`),
  );
  return row!;
}

async function dashboard() {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/dashboard?tenant=rdns-site&window=24h` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ kpis: Record<string, number>; uaClassBreakdown: unknown[] } & Record<string, unknown>>();
}

async function clusters() {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/clusters?tenant=rdns-site&window=24h` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ clusters: unknown[] }>().clusters;
}

const fingerprintCounts = async () =>
  rowsOf<{ fingerprint_id: string; event_count: string | number; liar_count: string | number }>(
    await t.app.database.db.execute(sql`SELECT fingerprint_id, event_count, liar_count FROM honeypot_fingerprints ORDER BY fingerprint_id`),
  ).map((r) => ({ fingerprintId: r.fingerprint_id, events: Number(r.event_count), liars: Number(r.liar_count) }));

const withoutTimes = (d: Record<string, unknown>) => ({ ...d, generatedAt: undefined, freshness: undefined });

beforeAll(async () => {
  dns = await startDnsServer();
  // A real Amazonbot: its name is under crawl.amazonbot.amazon and resolves back to it.
  dns.ptr.set('203.0.113.7', ['203-0-113-7.crawl.amazonbot.amazon']);
  dns.forward.set('203-0-113-7.crawl.amazonbot.amazon', ['203.0.113.7']);
  // A fake: named elsewhere.
  dns.ptr.set('198.51.100.9', ['host-9.residential.example.net']);
  // A fake that names itself under Amazon's domain, which does not resolve back to it.
  dns.ptr.set('198.51.100.10', ['198-51-100-10.crawl.amazonbot.amazon']);
  dns.forward.set('198-51-100-10.crawl.amazonbot.amazon', ['203.0.113.99']);
  // A DNS server that fails for this address: no verdict either way.
  dns.servfail.add('198.51.100.11');
  // Googlebot from an address outside the shipped ranges (a list gone stale), confirmed by DNS.
  dns.ptr.set('203.0.113.20', ['crawl-203-0-113-20.googlebot.com']);
  dns.forward.set('crawl-203-0-113-20.googlebot.com', ['203.0.113.20']);
  // A "Googlebot" whose name only looks like Google's.
  dns.ptr.set('198.51.100.21', ['crawl.googlebot.com.evil.example']);
  dns.forward.set('crawl.googlebot.com.evil.example', ['198.51.100.21']);
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_RDNS: '1', OBSERVATORY_RDNS_SERVERS: dns.address, OBSERVATORY_RDNS_TIMEOUT_MS: '500', OBSERVATORY_ROLLUP_APPLY_DELAY_MS: '0' },
  });
  secret = await createTenant(t, 'rdns-site');
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

describe('forward-confirmed reverse DNS', () => {
  it('answers ingest at once, then judges the stored events again when the lookup answers, rollups and counters included', async () => {
    dns.pause();
    const [real, fake, spoofedName, broken] = await send([
      { ua: AMAZONBOT_UA, ip: '203.0.113.7' },
      { ua: AMAZONBOT_UA, ip: '198.51.100.9' },
      { ua: AMAZONBOT_UA, ip: '198.51.100.10' },
      { ua: AMAZONBOT_UA, ip: '198.51.100.11' },
    ]);
    // Ingest did not wait for DNS: every claim is unverified for now, and stored as awaiting the answer.
    for (const e of [real, fake, spoofedName, broken]) expect(e!.uaClass).toBe('UNVERIFIED_AGENT');
    expect((await stored(real!.eventId)).evidence).toMatchObject({ rdns: { status: 'pending' }, unverifiedReason: 'lookup-pending', proofSources: ['fcrdns'] });

    // The dashboard adds them to the rollups with the verdicts they have now.
    const before = await dashboard();
    expect(before.kpis).toMatchObject({ totalEvents: 4, liarCount: 0, knownVerifiedCount: 0 });

    dns.resume();
    await t.app.honeypot.reverseDnsSettled();

    const realRow = await stored(real!.eventId);
    expect(realRow).toMatchObject({ ua_class: 'KNOWN_LLM_AGENT', proof: 'fcrdns:203-0-113-7.crawl.amazonbot.amazon' });
    expect(realRow.evidence).toMatchObject({
      rdns: { status: 'answered', ptr: ['203-0-113-7.crawl.amazonbot.amazon'], names: ['203-0-113-7.crawl.amazonbot.amazon'] },
      unverifiedReason: null,
    });
    // A verified request is keyed by its vendor, not its address: the fingerprint moved with the verdict.
    expect(realRow.fingerprint_id).not.toBe(real!.fingerprintId);
    expect(await stored(fake!.eventId)).toMatchObject({ ua_class: 'LIAR', proof: null });
    expect(await stored(spoofedName!.eventId)).toMatchObject({ ua_class: 'LIAR', proof: null });
    const brokenRow = await stored(broken!.eventId);
    expect(brokenRow).toMatchObject({ ua_class: 'UNVERIFIED_AGENT' });
    expect(brokenRow.evidence).toMatchObject({ rdns: { status: 'failed', error: 'ptr:ESERVFAIL' }, unverifiedReason: 'lookup-failed' });

    // The rollups and counters now say what the events say, exactly as a rebuild from the events would.
    const after = await dashboard();
    expect(after.kpis).toMatchObject({ totalEvents: 4, liarCount: 2, knownVerifiedCount: 1 });
    expect(after.uaClassBreakdown).toEqual(
      expect.arrayContaining([{ uaClass: 'LIAR', count: 2 }, { uaClass: 'KNOWN_LLM_AGENT', count: 1 }, { uaClass: 'UNVERIFIED_AGENT', count: 1 }]),
    );
    const afterClusters = await clusters();
    const counters = await fingerprintCounts();
    expect(counters.reduce((n, c) => n + c.events, 0)).toBe(4);
    expect(counters.reduce((n, c) => n + c.liars, 0)).toBe(2);
    expect(counters.every((c) => c.events > 0)).toBe(true);
    expect(counters.map((c) => c.fingerprintId)).toContain(realRow.fingerprint_id);
    expect(counters.map((c) => c.fingerprintId)).not.toContain(real!.fingerprintId);
    await t.app.honeypot.dashboard.rebuild();
    expect(withoutTimes(await dashboard())).toEqual(withoutTimes(after));
    expect(await clusters()).toEqual(afterClusters);

    // Replay re-derives the stored verdict and fingerprint from the evidence alone.
    for (const e of [real, fake, spoofedName, broken]) {
      const res = await t.call({ method: 'GET', url: `${V1}/honeypot/replay?eventId=${e!.eventId}` });
      expect(res.json(), e!.id).toMatchObject({ matches: true });
    }
  });

  it('judges a later request from an answered address at once, from the cache, without asking DNS again', async () => {
    const asked = dns.questions.length;
    const [again, liar] = await send([
      { ua: AMAZONBOT_UA, ip: '203.0.113.7' },
      { ua: AMAZONBOT_UA, ip: '198.51.100.9' },
    ]);
    expect(again!.uaClass).toBe('KNOWN_LLM_AGENT');
    expect(liar!.uaClass).toBe('LIAR');
    expect(dns.questions.length).toBe(asked);
    expect(t.app.honeypot.reverseDnsStats()).toMatchObject({ queued: 0, running: 0 });
  });

  it('lets reverse DNS verify a crawler outside its published ranges, judged a liar until the answer came', async () => {
    const [stale, lookalike] = await send([
      { ua: GOOGLEBOT_UA, ip: '203.0.113.20' },
      { ua: GOOGLEBOT_UA, ip: '198.51.100.21' },
    ]);
    // The ranges failed, so ingest answered LIAR; the lookup may still save the claim.
    expect(stale!.uaClass).toBe('LIAR');
    expect(lookalike!.uaClass).toBe('LIAR');
    await t.app.honeypot.reverseDnsSettled();
    expect(await stored(stale!.eventId)).toMatchObject({ ua_class: 'VERIFIED_CRAWLER', proof: 'fcrdns:crawl-203-0-113-20.googlebot.com' });
    const fake = await stored(lookalike!.eventId);
    expect(fake).toMatchObject({ ua_class: 'LIAR', proof: null });
    expect(fake.evidence).toMatchObject({ rdns: { status: 'answered', ptr: ['crawl.googlebot.com.evil.example'], names: [] } });
    // Whether the answer came before or after the applier took the events, the rollups agree with a rebuild.
    const now = await dashboard();
    expect(now.kpis).toMatchObject({ totalEvents: 8, knownVerifiedCount: 3 });
    await t.app.honeypot.dashboard.rebuild();
    expect(withoutTimes(await dashboard())).toEqual(withoutTimes(now));
  });

  it('never asks DNS when a quicker proof holds or the vendor publishes no domain, and says when a vendor has no proof source', async () => {
    const asked = dns.questions.length;
    const [googlebot, claudebot] = await send([
      { ua: GOOGLEBOT_UA, ip: '66.249.66.1' },
      { ua: CLAUDEBOT_UA, ip: '198.51.100.30' },
    ]);
    await t.app.honeypot.reverseDnsSettled();
    expect(googlebot!.uaClass).toBe('VERIFIED_CRAWLER');
    expect(claudebot!.uaClass).toBe('UNVERIFIED_AGENT');
    expect(dns.questions.length).toBe(asked);
    const res = await t.call({ method: 'GET', url: `${V1}/honeypot/investigate?tenant=rdns-site&fingerprintId=${claudebot!.fingerprintId}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().verifiedVendorVerdict).toMatchObject({
      uaClass: 'UNVERIFIED_AGENT',
      vendorId: 'anthropic-claudebot',
      proofSources: [],
      unverifiedReason: 'no-proof-source',
      summary: expect.stringContaining('publishes no proof source at all'),
    });
  });
});

/**
 * Sends `count` Amazonbot events from `ip`, lets their lookup settle and the rollups count them,
 * then marks them waiting for an answer again, as a restart with lookups out would leave them;
 * returns their ids and the address hash.
 */
async function waitingEvents(ip: string, count: number): Promise<{ ids: string[]; ipHash: string }> {
  const sentEvents = await send(Array.from({ length: count }, () => ({ ua: AMAZONBOT_UA, ip })));
  await t.app.honeypot.reverseDnsSettled();
  await t.app.honeypot.dashboard.applyPending();
  const ids = sentEvents.map((e) => e.eventId);
  await t.app.database.db.execute(sql`UPDATE honeypot_events SET evidence = jsonb_set(evidence, '{rdns}', '{"status":"pending"}')
    WHERE id = ANY(${`{${ids.join(',')}}`}::uuid[])`);
  const [row] = rowsOf<{ ip_hash: string }>(await t.app.database.db.execute(sql`SELECT ip_hash FROM honeypot_events WHERE id = ${ids[0]}`));
  return { ids, ipHash: row!.ip_hash };
}

/** A re-judge whose address hashing records which addresses each pass asked about (a pass hashes its batch in one go). */
function recordingRejudge(hashOf: (ip: string) => string, maxEvents?: number, onHash?: (ip: string) => void) {
  const passes: string[][] = [];
  let current: string[] | null = null;
  const rejudge = createRejudge({
    db: t.app.database.db,
    registry: createRegistryHolder(loadVendorRegistry(null)),
    fingerprints: { fingerprintOf },
    hashIp: (ip) => {
      if (current === null) {
        const pass: string[] = (current = []);
        passes.push(pass);
        queueMicrotask(() => (current = null));
      }
      current.push(ip);
      onHash?.(ip);
      return hashOf(ip);
    },
    ...(maxEvents !== undefined ? { maxEvents } : {}),
  });
  return { rejudge, passes };
}

/** The rollups, pending events applied, agree with a rebuild from the events. */
async function expectRollupsMatchRebuild(): Promise<void> {
  await t.app.honeypot.dashboard.applyPending();
  const now = await dashboard();
  await t.app.honeypot.dashboard.rebuild();
  expect(withoutTimes(await dashboard())).toEqual(withoutTimes(now));
}

describe('answers judged together', () => {
  it('judges the events of several answers in shared, bounded passes, each event with its own address\'s answer, until none waits', async () => {
    const first = await waitingEvents('198.51.100.40', 4);
    const second = await waitingEvents('198.51.100.41', 3);
    const ids = [...first.ids, ...second.ids];
    let hashed = 0;
    const { rejudge } = recordingRejudge(
      (ip) => (ip === '198.51.100.40' ? first.ipHash : second.ipHash),
      2,
      () => (hashed += 1),
    );
    rejudge.enqueue('198.51.100.40', { status: 'failed', error: 'ptr:ETIMEOUT' });
    rejudge.enqueue('198.51.100.41', { status: 'answered', ptr: [], names: [] });
    await rejudge.settled();

    // Seven events, two a pass: four passes, each asking about both addresses.
    expect(hashed).toBe(8);
    for (const [i, id] of ids.entries()) {
      const row = await stored(id);
      if (i < 4) expect(row, id).toMatchObject({ ua_class: 'UNVERIFIED_AGENT', evidence: { rdns: { status: 'failed', error: 'ptr:ETIMEOUT' } } });
      else expect(row, id).toMatchObject({ ua_class: 'LIAR', evidence: { rdns: { status: 'answered', ptr: [], names: [] } } });
    }
    // The counters moved with the verdicts: the rollups agree with a rebuild from the events.
    await expectRollupsMatchRebuild();
  });
});

describe('how answers are batched', () => {
  const FAILED: RdnsFact = { status: 'failed', error: 'ptr:ETIMEOUT' };
  const NO_NAME: RdnsFact = { status: 'answered', ptr: [], names: [] };

  it('puts at most 64 addresses in one transaction, and the rest in the next', async () => {
    const { rejudge, passes } = recordingRejudge((ip) => `hash-of-${ip}`);
    const addresses = Array.from({ length: 70 }, (_, i) => `192.0.2.${i + 1}`);
    for (const ip of addresses) rejudge.enqueue(ip, NO_NAME);
    await rejudge.settled();
    expect(passes.map((p) => p.length)).toEqual([64, 6]);
    expect(passes.flat().sort()).toEqual([...addresses].sort());
  });

  it('keeps only the newest answer of an address that answered twice before its pass', async () => {
    const { ids, ipHash } = await waitingEvents('198.51.100.50', 2);
    const { rejudge, passes } = recordingRejudge(() => ipHash);
    rejudge.enqueue('198.51.100.50', FAILED);
    rejudge.enqueue('198.51.100.50', NO_NAME);
    await rejudge.settled();
    expect(passes).toEqual([['198.51.100.50']]);
    for (const id of ids) expect(await stored(id), id).toMatchObject({ ua_class: 'LIAR', evidence: { rdns: NO_NAME } });
  });

  it('judges two spellings of one address that share a pass with the later answer', async () => {
    const { ids, ipHash } = await waitingEvents('2001:db8::51', 2);
    const { rejudge, passes } = recordingRejudge(() => ipHash);
    rejudge.enqueue('2001:db8::51', NO_NAME);
    rejudge.enqueue('2001:0db8:0:0::51', FAILED);
    await rejudge.settled();
    expect(passes).toEqual([['2001:db8::51', '2001:0db8:0:0::51']]);
    for (const id of ids) expect(await stored(id), id).toMatchObject({ ua_class: 'UNVERIFIED_AGENT', evidence: { rdns: FAILED } });
  });

  it('asks a full pass again with the newer answer when one arrived while it ran', async () => {
    const { ids, ipHash } = await waitingEvents('198.51.100.52', 4);
    let answeredAgain = false;
    const { rejudge, passes } = recordingRejudge(
      () => ipHash,
      2,
      // The second answer arrives while the first pass (which reaches its bound of 2 events) runs.
      (ip) => {
        if (answeredAgain) return;
        answeredAgain = true;
        rejudge.enqueue(ip, NO_NAME);
      },
    );
    rejudge.enqueue('198.51.100.52', FAILED);
    await rejudge.settled();
    expect(passes.length).toBe(3);
    // Two (the first pass's bound) were judged with the first answer; the rest with the newer one, not the first asked again.
    const rows = await Promise.all(ids.map(stored));
    expect(rows.filter((r) => r.ua_class === 'UNVERIFIED_AGENT' && (r.evidence.rdns as { status: string }).status === 'failed')).toHaveLength(2);
    expect(rows.filter((r) => r.ua_class === 'LIAR' && (r.evidence.rdns as { status: string }).status === 'answered')).toHaveLength(2);
    await expectRollupsMatchRebuild();
  });
});
