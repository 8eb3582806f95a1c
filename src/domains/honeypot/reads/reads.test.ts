import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import type { Scope } from '../../../platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { fingerprintOf } from '../enrichment/fingerprint.ts';
import { likeMatches, loadLureCatalogue, lureFamilyOf } from './service.ts';
import { CHROME_UA, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { parseVendorRegistry, SHIPPED_VENDORS_FILE } from '../vendors/registry.ts';

const T0 = new Date('2026-11-23T10:00:00.000Z');
const clock = new ManualClock(new Date(T0.getTime() - 60_000));
const ago = (ms: number) => new Date(T0.getTime() - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let t: TestApp;
const secrets = new Map<string, string>();

const CURL_UA = 'curl/8.4.0';
const JA4_A = 't13d1516h2_8daaf6152771_02713d6af862';
const JA4_B = 't13d190900_9dc949149365_97f8aa674fd9';
const JA4_C = 't13d181000_e8a523a41297_ef7df7f74e48';
const JA4_D = 't13d311200_aaaaaaaaaaaa_bbbbbbbbbbbb';
/** Python's ssl stack: not what a Chrome UA should come with. */
const JA4_PY = 't13d181000_5b57614c22b0_3d5424432f57';

/** What the setup stored: sender id → {eventId, fingerprintId, uaClass}. */
const stored = new Map<string, { eventId: string; fingerprintId: string; uaClass: string }>();
const sentIps: string[] = [];

async function send(slug: string, events: Record<string, unknown>[], options: { key?: string; t?: number; slugHeader?: string } = {}) {
  for (const e of events) if (typeof e.ip === 'string') sentIps.push(e.ip);
  return signedIngest(t, {
    slug,
    secret: options.key ?? secrets.get(slug)!,
    unixSeconds: options.t ?? Math.floor(clock.now().getTime() / 1000),
    body: { events },
    ...(options.slugHeader !== undefined ? { slugHeader: options.slugHeader } : {}),
  });
}

/** Sends one event per request, one second apart, and remembers what ingest answered. */
async function ingestOne(slug: string, event: Record<string, unknown>) {
  const res = await send(slug, [event]);
  expect(res.statusCode, res.body).toBe(200);
  const [answer] = res.json().events;
  stored.set(event.id as string, { eventId: answer.eventId, fingerprintId: answer.fingerprintId, uaClass: answer.uaClass });
  clock.advance(1000);
}

const get = (path: string, query: Record<string, string> = {}, token?: string) =>
  t.call({ method: 'GET', url: `${V1}/honeypot/${path}`, query, ...(token === undefined ? {} : { token }) });

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '3', OBSERVATORY_TARPIT_TTL_MINUTES: '30' } });
  for (const slug of ['docs-mirror', 'blog-trap']) {
    const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug, name: slug } });
    secrets.set(slug, created.json().signingSecret);
  }
  const docs: Record<string, unknown>[] = [
    { id: 'e1', path: '/llms.txt', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: JA4_A, ts: ago(HOUR) },
    { id: 'e2', path: '/llms-full.txt', ua: GPTBOT_UA, ip: '198.51.100.77', ja4: JA4_B, ts: ago(2 * HOUR) },
    { id: 'e3', path: '/.env', ua: CHROME_UA, ip: '203.0.113.9', ja4: JA4_PY, country: 'DE', asn: 3320, ts: ago(3 * HOUR), referer: 'https://example.org/' },
    { id: 'e4', path: '/honeypot/topics/ai-notes-7f3a', ua: CURL_UA, ip: '198.51.100.10', asn: 64501, ts: ago(30 * MIN) },
    { id: 'e5', path: '/honeypot/topics/llm-pricing', ua: CURL_UA, ip: '198.51.100.11', asn: 64501, ts: ago(10 * MIN), query: 'ref=feed' },
    { id: 'e6', path: '/honeypot/topics/llm-pricing', ua: CURL_UA, ip: '198.51.100.12', asn: 64501, ts: ago(2 * DAY) },
    { id: 'e7', path: '/q/best-gpu', ua: CURL_UA, ip: '198.51.100.13', asn: 64501, ts: ago(3 * DAY) },
    { id: 'e8', path: '/honeypot/topics/', ua: CURL_UA, ip: '198.51.100.14', asn: 64501, ts: ago(HOUR) },
    { id: 'e10', path: '/admin', ua: CURL_UA, ip: '198.51.100.15', asn: 64501, ts: ago(8 * DAY) },
    { id: 'e11', path: '/about', ua: CURL_UA, ip: '198.51.100.16', asn: 64501, ts: ago(4 * HOUR) },
    // Three LIARs within 10 minutes: the threshold is 3, so the third opens a tarpit.
    { id: 'l1', path: '/about', ua: GPTBOT_UA, ip: '198.51.100.200', ja4: JA4_C, country: 'NL', asn: 14061, ts: ago(3 * MIN) },
    { id: 'l2', path: '/about', ua: GPTBOT_UA, ip: '198.51.100.200', ja4: JA4_C, country: 'NL', asn: 14061, ts: ago(2 * MIN) },
    { id: 'l3', path: '/about', ua: GPTBOT_UA, ip: '198.51.100.200', ja4: JA4_C, country: 'NL', asn: 14061, ts: ago(1 * MIN) },
  ];
  for (const event of docs) await ingestOne('docs-mirror', event);
  // LIKE is case-sensitive: /LLMS.TXT is no llms.txt lure hit.
  await ingestOne('blog-trap', { id: 'b2', path: '/LLMS.TXT', ua: 'python-requests/2.31.0', ip: '198.51.100.31', ts: ago(6 * MIN) });
  await ingestOne('blog-trap', { id: 'b1', path: '/llms.txt', ua: CURL_UA, ip: '198.51.100.30', asn: 64501, ts: ago(5 * MIN) });
  clock.set(T0);
});
afterAll(() => t.close());

describe('recent', () => {
  it('lists a tenant\'s events newest first with their classification and enrichment, never the IP', async () => {
    const res = await get('recent', { tenant: 'docs-mirror', limit: '3' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-recent.v1', tenant: 'docs-mirror' });
    expect(body.events.map((e: { senderId: string }) => e.senderId)).toEqual(['l3', 'l2', 'l1']);
    expect(body.events[0]).toMatchObject({
      id: stored.get('l3')!.eventId,
      tenant: 'docs-mirror',
      ts: ago(MIN),
      method: 'GET',
      path: '/about',
      uaRaw: GPTBOT_UA,
      uaClass: 'LIAR',
      vendorId: 'openai-gptbot',
      proof: null,
      fingerprintId: stored.get('l3')!.fingerprintId,
      ja4: JA4_C,
      asn: 14061,
      country: 'NL',
      referer: null,
    });
    expect(body.events[0].ipHash).toMatch(/^[0-9a-f]{64}$/);

    const all = (await get('recent', { tenant: 'docs-mirror' })).json().events;
    expect(all).toHaveLength(13);
    const ts = all.map((e: { ts: string }) => Date.parse(e.ts));
    expect(ts).toEqual([...ts].sort((a, b) => b - a));
    const e3 = all.find((e: { senderId: string }) => e.senderId === 'e3');
    expect(e3).toMatchObject({ country: 'DE', asn: 3320, referer: 'https://example.org/', ja4: JA4_PY, uaClass: 'BROWSER' });
    expect(all.find((e: { senderId: string }) => e.senderId === 'e5').query).toBe('ref=feed');
    const e1 = all.find((e: { senderId: string }) => e.senderId === 'e1');
    expect(e1).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'openai-gptbot', proof: expect.stringMatching(/^ip-range:/) });
    const text = JSON.stringify(all);
    for (const ip of sentIps) expect(text).not.toContain(`"${ip}"`);
  });

  it('covers every tenant when none is named, and the same IP hashes alike', async () => {
    const body = (await get('recent')).json();
    expect(body.tenant).toBeNull();
    expect(body.events).toHaveLength(15);
    expect(body.events.slice(0, 4).map((e: { senderId: string; tenant: string }) => `${e.tenant}:${e.senderId}`)).toEqual([
      'docs-mirror:l3',
      'docs-mirror:l2',
      'docs-mirror:l1',
      'blog-trap:b1',
    ]);
    const liars = body.events.filter((e: { senderId: string }) => e.senderId.startsWith('l'));
    expect(new Set(liars.map((e: { ipHash: string }) => e.ipHash)).size).toBe(1);
    expect((await get('recent', { tenant: 'blog-trap' })).json().events.map((e: { senderId: string }) => e.senderId)).toEqual(['b1', 'b2']);
  });

  it('refuses a limit outside 1..100 and an unknown or malformed tenant', async () => {
    for (const limit of ['0', '101', 'ten']) {
      const res = await get('recent', { limit });
      expect(res.statusCode, limit).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field: 'query.limit' });
    }
    expect((await get('recent', { limit: '100' })).statusCode).toBe(200);
    const unknown = await get('recent', { tenant: 'nobody' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    expect((await get('recent', { tenant: 'Not A Slug' })).statusCode).toBe(400);
  });
});

describe('investigate', () => {
  it('gives the full form for a liar fingerprint: drift, verdict with what failed, tarpit', async () => {
    const fp = stored.get('l1')!.fingerprintId;
    const res = await get('investigate', { tenant: 'docs-mirror', fingerprintId: fp });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-investigate.v1', tenant: 'docs-mirror', fingerprintId: fp, found: true });
    expect(body.fingerprint).toMatchObject({
      fingerprintId: fp,
      tenants: ['docs-mirror'],
      firstSeen: ago(3 * MIN),
      lastSeen: ago(MIN),
      eventCount: 3,
      liarCount: 3,
      ja4: JA4_C,
      uaSample: GPTBOT_UA,
      lastUaClass: 'LIAR',
      asn: 14061,
    });
    expect(body.events.map((e: { senderId: string }) => e.senderId)).toEqual(['l3', 'l2', 'l1']);
    expect(body.countriesSeen).toEqual([{ countryCode: 'NL', count: 3 }]);
    expect(body.pathsSeen).toEqual([{ path: '/about', count: 3 }]);
    expect(body.uaClassesSeen).toEqual([{ uaClass: 'LIAR', count: 3 }]);
    // The same GPTBot UA came with three TLS stacks in this tenant.
    expect(body.ja4Drift).toMatchObject({ drifting: true, ja4s: [JA4_C, JA4_B, JA4_A].sort(), otherJa4s: [JA4_A, JA4_B].sort(), eventsWithJa4: 5 });
    expect(body.ja4Drift.fingerprints).toHaveLength(3);
    expect(body.ja4Drift.fingerprints[0]).toEqual({ fingerprintId: fp, ja4: JA4_C, eventCount: 3 });
    expect(body.uaJa4Consistency).toMatchObject({ flag: 'unknown', claims: null });
    expect(body.verifiedVendorVerdict).toMatchObject({
      eventId: stored.get('l3')!.eventId,
      uaClass: 'LIAR',
      vendorId: 'openai-gptbot',
      proof: null,
      verified: false,
      claimed: ['openai-gptbot'],
    });
    expect(body.verifiedVendorVerdict.failed).toEqual([expect.stringMatching(/^ip-range: .*outside.*openai-gptbot/)]);
    expect(body.tarpit).toMatchObject({ active: true, fingerprintId: fp, tenant: 'docs-mirror', delayMs: 8000, reason: 'liar-flood:3/10min', liarEventCount: 3 });
  });

  it('flags a Chrome UA over a non-browser TLS stack, and verifies a real GPTBot', async () => {
    const chrome = (await get('investigate', { fingerprintId: stored.get('e3')!.fingerprintId })).json();
    expect(chrome).toMatchObject({ tenant: null, found: true, tarpit: null });
    expect(chrome.uaJa4Consistency).toMatchObject({ flag: 'inconsistent', claims: 'chrome' });
    expect(chrome.ja4Drift).toMatchObject({ drifting: false, otherJa4s: [] });
    expect(chrome.verifiedVendorVerdict).toMatchObject({ uaClass: 'BROWSER', vendorId: null, verified: false, failed: [] });

    const real = (await get('investigate', { tenant: 'docs-mirror', fingerprintId: stored.get('e1')!.fingerprintId })).json();
    expect(real.verifiedVendorVerdict).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'openai-gptbot', verified: true, failed: [] });
    expect(real.verifiedVendorVerdict.proof).toMatch(/^ip-range:/);
    expect(real.uaJa4Consistency.flag).toBe('unknown');
  });

  it('aggregates a fingerprint seen by several tenants when no tenant is named', async () => {
    // curl with no JA4 from one AS is one fingerprint in both tenants.
    const fp = stored.get('b1')!.fingerprintId;
    expect(stored.get('e4')!.fingerprintId).toBe(fp);
    const both = (await get('investigate', { fingerprintId: fp })).json();
    expect(both.fingerprint).toMatchObject({ tenants: ['blog-trap', 'docs-mirror'], eventCount: 8, firstSeen: ago(8 * DAY) });
    const one = (await get('investigate', { tenant: 'blog-trap', fingerprintId: fp })).json();
    expect(one.fingerprint).toMatchObject({ tenants: ['blog-trap'], eventCount: 1 });
    expect(one.pathsSeen).toEqual([{ path: '/llms.txt', count: 1 }]);
  });

  it('answers 200 found=false for an unknown fingerprint or one of another tenant', async () => {
    const unknown = await get('investigate', { fingerprintId: 'ffffffffffffffff' });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json()).toMatchObject({
      found: false,
      fingerprint: null,
      events: [],
      countriesSeen: [],
      pathsSeen: [],
      ja4Drift: null,
      uaJa4Consistency: null,
      verifiedVendorVerdict: null,
      tarpit: null,
    });
    const elsewhere = (await get('investigate', { tenant: 'blog-trap', fingerprintId: stored.get('l1')!.fingerprintId })).json();
    expect(elsewhere).toMatchObject({ tenant: 'blog-trap', found: false });
  });

  it('refuses a missing or malformed fingerprint id and an unknown tenant', async () => {
    expect((await get('investigate')).json()).toMatchObject({ reason: 'invalid-query', field: 'query.fingerprintId' });
    expect((await get('investigate', { fingerprintId: 'XYZ' })).statusCode).toBe(400);
    expect((await get('investigate', { tenant: 'nobody', fingerprintId: 'ffffffffffffffff' })).statusCode).toBe(404);
  });
});

describe('replay', () => {
  it('re-derives a stored event and finds it matches, with its envelope', async () => {
    const eventId = stored.get('e1')!.eventId;
    const res = await get('replay', { eventId });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      schema: 'svc-observatory-replay.v1',
      mode: 'event',
      tenant: 'docs-mirror',
      eventId,
      matches: true,
      fields: [],
      compared: ['fingerprintId', 'uaClass', 'vendorId', 'proof'],
      envelopes: null,
    });
    const [row] = rowsOf<{ body_bytes: number; received_at: Date | string }>(
      await t.app.database.db.execute(sql`SELECT body_bytes, received_at FROM honeypot_events WHERE id = ${eventId}`),
    );
    expect(body.envelope).toEqual({ schemaVersion: 2, receivedAt: new Date(row!.received_at).toISOString(), sourceTenant: 'docs-mirror', bodyBytes: row!.body_bytes });
    expect(body.envelope.bodyBytes).toBeGreaterThan(50);
  });

  it('reports the fields that differ under a changed registry, and a tampered fingerprint', async () => {
    const holder = t.app.honeypot.registry;
    const original = holder.current;
    const json = JSON.parse(readFileSync(SHIPPED_VENDORS_FILE, 'utf8'));
    holder.current = parseVendorRegistry({ ...json, vendors: json.vendors.filter((v: { id: string }) => v.id !== 'openai-gptbot') }, 'no-gptbot');
    try {
      const body = (await get('replay', { eventId: stored.get('e1')!.eventId })).json();
      expect(body.matches).toBe(false);
      const byField = new Map(body.fields.map((f: { field: string }) => [f.field, f]));
      // No longer verified, the event would be keyed by its network, not as its vendor's.
      expect([...byField.keys()]).toEqual(['fingerprintId', 'uaClass', 'vendorId', 'proof']);
      expect(byField.get('fingerprintId')).toMatchObject({ stored: stored.get('e1')!.fingerprintId, replayed: expect.not.stringMatching(stored.get('e1')!.fingerprintId) });
      expect(byField.get('uaClass')).toMatchObject({ stored: 'KNOWN_LLM_AGENT', replayed: expect.not.stringMatching(/^KNOWN_LLM_AGENT$/) });
      expect(byField.get('vendorId')).toEqual({ field: 'vendorId', stored: 'openai-gptbot', replayed: null });
      expect(byField.get('proof')).toMatchObject({ stored: expect.stringMatching(/^ip-range:/), replayed: null });
      // An event that named no vendor is unaffected.
      expect((await get('replay', { eventId: stored.get('e4')!.eventId })).json().matches).toBe(true);
    } finally {
      holder.current = original;
    }
    expect((await get('replay', { eventId: stored.get('e1')!.eventId })).json().matches).toBe(true);

    const e11 = stored.get('e11')!;
    await t.app.database.db.execute(sql`UPDATE honeypot_events SET fingerprint_id = '0000000000000000' WHERE id = ${e11.eventId}`);
    const tampered = (await get('replay', { eventId: e11.eventId })).json();
    expect(tampered).toMatchObject({ matches: false, fields: [{ field: 'fingerprintId', stored: '0000000000000000', replayed: e11.fingerprintId }] });
  });

  it('re-derives an event stored with schema version 1 as it was keyed then (JA4 and UA alone)', async () => {
    const e5 = stored.get('e5')!;
    const legacy = fingerprintOf({ ja4: null, ua: CURL_UA }).fingerprintId;
    expect(legacy).not.toBe(e5.fingerprintId);
    await t.app.database.db.execute(sql`UPDATE honeypot_events SET schema_version = 1, fingerprint_id = ${legacy} WHERE id = ${e5.eventId}`);
    try {
      const body = (await get('replay', { eventId: e5.eventId })).json();
      expect(body).toMatchObject({ matches: true, fields: [], envelope: { schemaVersion: 1 } });
      await t.app.database.db.execute(sql`UPDATE honeypot_events SET schema_version = 2 WHERE id = ${e5.eventId}`);
      expect((await get('replay', { eventId: e5.eventId })).json()).toMatchObject({ matches: false, fields: [{ field: 'fingerprintId', stored: legacy, replayed: e5.fingerprintId }] });
    } finally {
      await t.app.database.db.execute(sql`UPDATE honeypot_events SET schema_version = 2, fingerprint_id = ${e5.fingerprintId} WHERE id = ${e5.eventId}`);
    }
  });

  it('lists the newest stored envelopes with list=1 or without an eventId', async () => {
    const listed = (await get('replay', { list: '1', limit: '2', tenant: 'docs-mirror' })).json();
    expect(listed).toMatchObject({ mode: 'list', tenant: 'docs-mirror', eventId: null, matches: null, fields: [], envelope: null });
    expect(listed.envelopes.map((e: { eventId: string }) => e.eventId)).toEqual([stored.get('l3')!.eventId, stored.get('l2')!.eventId]);
    expect(listed.envelopes[0]).toMatchObject({ schemaVersion: 2, sourceTenant: 'docs-mirror' });
    expect(Date.parse(listed.envelopes[0].receivedAt)).toBeGreaterThan(Date.parse(listed.envelopes[1].receivedAt));
    const fleet = (await get('replay')).json();
    expect(fleet.envelopes).toHaveLength(15);
    expect(fleet.envelopes[0]).toMatchObject({ eventId: stored.get('b1')!.eventId, sourceTenant: 'blog-trap' });
  });

  it('answers 404 for an unknown event or one outside the tenant, 400 for bad input', async () => {
    const unknown = await get('replay', { eventId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().reason).toBe('not-found');
    expect((await get('replay', { eventId: stored.get('b1')!.eventId, tenant: 'docs-mirror' })).statusCode).toBe(404);
    expect((await get('replay', { eventId: 'not-a-uuid' })).json()).toMatchObject({ reason: 'invalid-query', field: 'query.eventId' });
    expect((await get('replay', { eventId: stored.get('e1')!.eventId, list: '1' })).json()).toMatchObject({ reason: 'invalid-query', field: 'query.list' });
    expect((await get('replay', { list: '1', limit: '101' })).statusCode).toBe(400);
    expect((await get('replay', { list: '1', tenant: 'nobody' })).statusCode).toBe(404);
  });
});

describe('lure catalogue', () => {
  it('ships at least 12 families with unique ids and LIKE patterns', () => {
    const catalogue = loadLureCatalogue();
    expect(catalogue.length).toBeGreaterThanOrEqual(12);
    for (const kind of ['credentials', 'admin', 'llms-txt', 'docs', 'generated', 'feed', 'robots-trap', 'sitemap-only', 'canary', 'pricing', 'dataset']) {
      expect(catalogue.map((f) => f.kind), kind).toContain(kind);
    }
  });

  it('matches paths by LIKE, first family wins', () => {
    const catalogue = loadLureCatalogue();
    expect(likeMatches('/llms%.txt', '/llms.txt')).toBe(true);
    expect(likeMatches('/llms%.txt', '/llms-full.txt')).toBe(true);
    expect(likeMatches('/llms%.txt', '/llms.txt.bak')).toBe(false);
    expect(likeMatches('/a_c', '/abc')).toBe(true);
    expect(likeMatches('/a_c', '/ac')).toBe(false);
    expect(lureFamilyOf(catalogue, '/honeypot/topics/ai-notes-1')?.id).toBe('prompt-injection-canary');
    expect(lureFamilyOf(catalogue, '/honeypot/topics/other')?.id).toBe('generated-topics');
    expect(lureFamilyOf(catalogue, '/.env.production')?.id).toBe('env-credentials');
    expect(lureFamilyOf(catalogue, '/about')).toBeNull();
  });
});

describe('lures', () => {
  it('counts hits per family over 24 h and 7 days, each event for its first family only', async () => {
    const res = await get('lures', { tenant: 'docs-mirror' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const family = (id: string) => body.families.find((f: { id: string }) => f.id === id);
    expect(body.families.map((f: { id: string }) => f.id)).toEqual(loadLureCatalogue().map((f) => f.id));
    expect(family('llms-txt')).toMatchObject({
      pathLike: '/llms%.txt',
      hits24h: 2,
      hits7d: 2,
      uniqueIpHashes24h: 2,
      uniqueFingerprints24h: 2,
      topUaClass: 'KNOWN_LLM_AGENT', // one KNOWN_LLM_AGENT, one LIAR: ties go to the first by name
      lastHitAt: ago(HOUR),
    });
    expect(family('prompt-injection-canary')).toMatchObject({ hits24h: 1, hits7d: 1, topUaClass: 'UNKNOWN_BOT' });
    expect(family('generated-topics')).toMatchObject({ hits24h: 2, hits7d: 3, uniqueIpHashes24h: 2, lastHitAt: ago(10 * MIN) });
    expect(family('env-credentials')).toMatchObject({ hits24h: 1, hits7d: 1, topUaClass: 'BROWSER' });
    expect(family('search-pages')).toMatchObject({ hits24h: 0, hits7d: 1, uniqueIpHashes24h: 0, lastHitAt: ago(3 * DAY) });
    // /admin was hit 8 days ago: outside both windows.
    expect(family('admin-panels')).toMatchObject({ hits24h: 0, hits7d: 0, topUaClass: null, lastHitAt: null });
    expect(body.totals).toEqual({ families: body.families.length, hits24h: 6, hits7d: 8 });

    const fleet = (await get('lures')).json();
    expect(fleet.tenant).toBeNull();
    expect(fleet.totals).toMatchObject({ hits24h: 7, hits7d: 9 });
    expect(fleet.families.find((f: { id: string }) => f.id === 'llms-txt')).toMatchObject({ hits24h: 3, uniqueIpHashes24h: 3, lastHitAt: ago(5 * MIN) });
  });

  it('answers 404 for an unknown tenant', async () => {
    expect((await get('lures', { tenant: 'nobody' })).statusCode).toBe(404);
  });
});

describe('sitemap', () => {
  it('counts generated URLs below the three roots, the root itself excluded', async () => {
    const res = await get('sitemap', { tenant: 'docs-mirror' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      schema: 'svc-observatory-sitemap.v1',
      tenant: 'docs-mirror',
      buckets: [
        { rootPath: '/honeypot/topics/', hits24h: 2, hits7d: 3, uniqueIpHashes24h: 2, topPath: '/honeypot/topics/llm-pricing', topPathCount: 2 },
        { rootPath: '/q/', hits24h: 0, hits7d: 1, uniqueIpHashes24h: 0, topPath: '/q/best-gpu', topPathCount: 1 },
        { rootPath: '/agents/', hits24h: 0, hits7d: 0, uniqueIpHashes24h: 0, topPath: null, topPathCount: 0 },
      ],
      uniqueGeneratedUrlsSeen7d: 3,
      totalGeneratedHits7d: 4,
    });
    const other = (await get('sitemap', { tenant: 'blog-trap' })).json();
    expect(other.totalGeneratedHits7d).toBe(0);
    expect((await get('sitemap', { tenant: 'nobody' })).statusCode).toBe(404);
  });
});

describe('tarpits', () => {
  it('lists tarpits in force first, then ended ones', async () => {
    const first = (await get('tarpits', { tenant: 'docs-mirror' })).json();
    expect(first).toMatchObject({ schema: 'svc-observatory-tarpits.v1', tenant: 'docs-mirror' });
    expect(first.rows).toEqual([
      expect.objectContaining({ active: true, fingerprintId: stored.get('l1')!.fingerprintId, tenant: 'docs-mirror', delayMs: 8000, reason: 'liar-flood:3/10min', liarEventCount: 3 }),
    ]);
    expect(Date.parse(first.rows[0].expiresAt) - Date.parse(first.rows[0].triggeredAt)).toBe(30 * MIN);
    expect((await get('tarpits', { tenant: 'blog-trap' })).json().rows).toEqual([]);

    // 31 minutes on, the first has expired (not yet swept by the job); a new flood opens another.
    clock.advance(31 * MIN);
    const liar = { path: '/about', ua: GPTBOT_UA, ip: '198.51.100.201', ja4: JA4_D };
    expect((await send('docs-mirror', [liar, liar, liar])).json().events[2].tarpit.active).toBe(true);
    const rows = (await get('tarpits', { tenant: 'docs-mirror' })).json().rows;
    expect(rows.map((r: { active: boolean }) => r.active)).toEqual([true, false]);
    expect(rows[1].fingerprintId).toBe(stored.get('l1')!.fingerprintId);
    expect((await get('tarpits')).json()).toMatchObject({ tenant: null, rows: [{ active: true }, { active: false }] });
    expect((await get('tarpits', { tenant: 'nobody' })).statusCode).toBe(404);
  });
});

/** percentile_disc by hand: the smallest value whose cumulative share reaches p. */
function nearestRank(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}
const round3 = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);

describe('ops/ingest', () => {
  it('summarises the real ingest samples of the window with exact percentiles', async () => {
    await send('docs-mirror', [{ path: '/', ip: '198.51.100.1' }], { key: 'whsec_wrong' });
    await send('docs-mirror', [{ path: '/', ip: '198.51.100.1' }], { t: Math.floor(clock.now().getTime() / 1000) - 301 });
    await send('docs-mirror', [{ path: '/', ip: '198.51.100.1' }], { slugHeader: 'nobody' });
    const res = await get('ops/ingest', { window: '24h' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const now = clock.now();
    const samples = rowsOf<{ outcome: string; tenant_slug: string | null; latency: number }>(
      await t.app.database.db.execute(
        sql`SELECT outcome, tenant_slug, latency_ms::float8 AS latency FROM ingest_samples WHERE received_at >= ${new Date(now.getTime() - DAY).toISOString()}::timestamptz`,
      ),
    );
    // 15 setup requests + 1 tarpit flood + 3 refusals.
    expect(samples).toHaveLength(19);
    const latencies = samples.map((s) => Number(s.latency));
    expect(body).toMatchObject({
      schema: 'svc-observatory-ops-ingest.v1',
      window: '24h',
      windowStartIso: new Date(now.getTime() - DAY).toISOString(),
      totalSamples: 19,
      okCount: 16,
      okRatePct: 84.21,
      signatureFailureCount: 2,
      signatureFailureRatePct: 10.53,
      p50Ms: round3(nearestRank(latencies, 0.5)),
      p95Ms: round3(nearestRank(latencies, 0.95)),
      p99Ms: round3(nearestRank(latencies, 0.99)),
    });
    expect(body.outcomeBreakdown).toEqual([
      { outcome: 'ok', count: 16 },
      { outcome: 'bad-signature', count: 1 },
      { outcome: 'stale-signature', count: 1 },
      { outcome: 'unknown-tenant', count: 1 },
    ]);
    expect(body.perTenantCount).toEqual([
      { tenant: 'docs-mirror', count: 16 },
      { tenant: 'blog-trap', count: 2 },
      { tenant: 'nobody', count: 1 },
    ]);
    expect((await get('ops/ingest')).json().window).toBe('24h');
  });

  it('answers nulls without samples, and percentile_disc over known latencies by window', async () => {
    clock.advance(8 * DAY);
    const empty = (await get('ops/ingest', { window: '7d' })).json();
    expect(empty).toMatchObject({ totalSamples: 0, okCount: 0, okRatePct: null, signatureFailureRatePct: null, p50Ms: null, p95Ms: null, p99Ms: null, outcomeBreakdown: [], perTenantCount: [] });

    const now = clock.now().getTime();
    // 20 samples in the last hour with latencies 1..20 ms, and one slow one 2 hours back.
    for (let i = 1; i <= 20; i++) {
      await t.app.database.db.execute(sql`INSERT INTO ingest_samples (tenant_slug, received_at, outcome, latency_ms, event_count)
        VALUES ('docs-mirror', ${new Date(now - i * MIN).toISOString()}::timestamptz, ${i % 10 === 0 ? 'bad-signature' : 'ok'}, ${i}, 1)`);
    }
    await t.app.database.db.execute(sql`INSERT INTO ingest_samples (tenant_slug, received_at, outcome, latency_ms, event_count)
      VALUES ('blog-trap', ${new Date(now - 2 * HOUR).toISOString()}::timestamptz, 'ok', 500, 1)`);
    const hour = (await get('ops/ingest', { window: '1h' })).json();
    // Nearest rank: p50 of 1..20 is 10 (percentile_cont would say 10.5), p95 is 19, p99 is 20.
    expect(hour).toMatchObject({ totalSamples: 20, okCount: 18, okRatePct: 90, signatureFailureCount: 2, signatureFailureRatePct: 10, p50Ms: 10, p95Ms: 19, p99Ms: 20 });
    const day = (await get('ops/ingest', { window: '24h' })).json();
    expect(day).toMatchObject({ totalSamples: 21, p50Ms: 11, p99Ms: 500 });
    expect(day.perTenantCount).toEqual([{ tenant: 'docs-mirror', count: 20 }, { tenant: 'blog-trap', count: 1 }]);
  });

  it('refuses a window other than 1h, 24h and 7d', async () => {
    const res = await get('ops/ingest', { window: '2h' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-query', field: 'query.window' });
  });
});

describe('scopes', () => {
  const required: [string, Record<string, string>, Scope][] = [
    ['recent', {}, 'read:events'],
    ['investigate', { fingerprintId: 'ffffffffffffffff' }, 'read:intel'],
    ['replay', { list: '1' }, 'read:events'],
    ['lures', {}, 'read:events'],
    ['sitemap', {}, 'read:events'],
    ['tarpits', {}, 'read:events'],
    ['ops/ingest', {}, 'read:dashboard'],
  ];
  const READS: Scope[] = ['read:events', 'read:intel', 'read:dashboard', 'read:tenants', 'read:clusters', 'read:empire'];

  it('lets each read through with its scope and refuses the other read scopes with 403', async () => {
    for (const [path, query, scope] of required) {
      const ok = await get(path, query, await t.tokenWith([scope]));
      expect(ok.statusCode, `${path} with ${scope}`).toBe(200);
      const denied = await get(path, query, await t.tokenWith(READS.filter((s) => s !== scope)));
      expect(denied.statusCode, `${path} without ${scope}`).toBe(403);
      expect(denied.json()).toMatchObject({ reason: 'forbidden' });
    }
  });
});
