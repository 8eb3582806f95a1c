import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { CHROME_UA, GPTBOT_IP, GPTBOT_UA, INGEST_PATH as INGEST, signedIngest } from '../../../../test/helpers/honeypot.ts';

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
let secret: string;


function send(body: unknown, options: { slug?: string; key?: string; t?: number; raw?: string } = {}) {
  return signedIngest(t, {
    slug: options.slug ?? 'docs-mirror',
    secret: options.key ?? secret,
    unixSeconds: options.t ?? Math.floor(clock.now().getTime() / 1000),
    body,
    ...(options.raw !== undefined ? { raw: options.raw } : {}),
  });
}

async function samples() {
  // Samples are buffered and written in batches; write this instance's now.
  await t.app.honeypot.ingest.flushSamples();
  return rowsOf<{ outcome: string; tenant_slug: string | null; event_count: number }>(
    await t.app.database.db.execute(sql`SELECT outcome, tenant_slug, event_count FROM ingest_samples ORDER BY id`),
  );
}

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5', OBSERVATORY_TARPIT_TTL_MINUTES: '30' } });
  const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'docs-mirror', name: 'Docs mirror' } });
  secret = created.json().signingSecret;
});
afterAll(() => t?.close());

describe('signed ingest (happy)', () => {
  it('stores, classifies and enriches events, keeping only a keyed hash of the IP', async () => {
    const res = await send({
      events: [
        { id: 'e-1', path: '/honeypot/topics/llm-pricing', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: 't13d1516h2_8daaf6152771_02713d6af862' },
        { id: 'e-2', path: '/q/agents', ua: CHROME_UA, ip: '203.0.113.9', country: 'DE', asn: 3320 },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-ingest.v1', accepted: 2, duplicates: 0 });
    expect(body.events[0]).toMatchObject({ id: 'e-1', uaClass: 'KNOWN_LLM_AGENT', tarpit: { active: false, delayMs: 0 } });
    expect(body.events[0].fingerprintId).toMatch(/^[0-9a-f]{8,}$/);

    const rows = rowsOf<Record<string, unknown>>(
      await t.app.database.db.execute(sql`SELECT * FROM honeypot_events ORDER BY sender_id`),
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ sender_id: 'e-1', path: '/honeypot/topics/llm-pricing', ua_class: 'KNOWN_LLM_AGENT', vendor_id: expect.stringMatching(/gptbot/) });
    expect(String(rows[0]!.proof)).toMatch(/^ip-range:/);
    // asn is bigint: node-postgres hands int8 back as text, PGlite as a number.
    expect(rows[1]).toMatchObject({ country: 'DE', attribution_source: 'sender' });
    expect(Number(rows[1]!.asn)).toBe(3320);
    const everything = JSON.stringify(rowsOf(await t.app.database.db.execute(sql`SELECT * FROM honeypot_events`)));
    expect(everything).not.toContain(GPTBOT_IP);
    expect(everything).not.toContain('203.0.113.9');
    expect(rows[0]!.ip_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('counts an id sent again, in a later request or the same one, as a duplicate', async () => {
    const again = await send({ events: [{ id: 'e-1', path: '/other', ip: '198.51.100.1' }, { id: 'e-3', path: '/x', ip: '198.51.100.1' }, { id: 'e-3', path: '/x', ip: '198.51.100.1' }] });
    expect(again.json()).toMatchObject({ accepted: 1, duplicates: 2 });
    const [first, , repeat] = again.json().events;
    expect(first.uaClass).toBe('KNOWN_LLM_AGENT');
    expect(repeat.eventId).toBe(again.json().events[1].eventId);
    const n = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM honeypot_events`))[0]!.n;
    expect(n).toBe(3);
  });

  it('stores 32-bit AS numbers above the signed-integer range (private-use 4200000000)', async () => {
    const res = await send({ events: [{ id: 'big-asn', path: '/', ip: '198.51.100.3', asn: 4200000000, country: 'US' }] });
    expect(res.statusCode, res.body).toBe(200);
    const [row] = rowsOf<{ asn: string | number }>(await t.app.database.db.execute(sql`SELECT asn FROM honeypot_events WHERE sender_id = 'big-asn'`));
    expect(Number(row!.asn)).toBe(4200000000);
    expect((await send({ events: [{ path: '/', ip: '198.51.100.3', asn: 4294967296 }] })).statusCode).toBe(400);
  });

  it('calls a vendor UA from outside its ranges a liar, and one without published proofs unverified', async () => {
    const res = await send({
      events: [
        { path: '/a', ua: GPTBOT_UA, ip: '198.51.100.77' },
        { path: '/b', ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', ip: '198.51.100.78' },
      ],
    });
    expect(res.json().events.map((e: { uaClass: string }) => e.uaClass)).toEqual(['LIAR', 'UNVERIFIED_AGENT']);
  });
});

describe('signed ingest (refusals), each sampled with its outcome', () => {
  it('refuses an unknown tenant, a bad signature and a stale one with 401', async () => {
    const body = { events: [{ path: '/', ip: '198.51.100.1' }] };
    const unknown = await send(body, { slug: 'nobody' });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unknown-tenant' });
    const bad = await send(body, { key: 'whsec_wrong' });
    expect(bad.json()).toMatchObject({ reason: 'bad-signature' });
    const stale = await send(body, { t: Math.floor(clock.now().getTime() / 1000) - 301 });
    expect(stale.statusCode).toBe(401);
    expect(stale.json().reason).toBe('stale-signature');
    const unsigned = await t.call({ method: 'POST', url: INGEST, token: null, payload: body, headers: { 'x-observatory-tenant': 'docs-mirror' } });
    expect(unsigned.json().reason).toBe('bad-signature');
    // Samples are written after the response is sent, off the request path: wait for them.
    await expect
      .poll(async () => (await samples()).map((s) => s.outcome))
      .toEqual(expect.arrayContaining(['unknown-tenant', 'bad-signature', 'stale-signature']));
  });

  it('checks the signature before the body, so an unsigned bad body is still 401', async () => {
    const res = await t.call({ method: 'POST', url: INGEST, token: null, payload: { events: [] }, headers: { 'x-observatory-tenant': 'docs-mirror' } });
    expect(res.statusCode).toBe(401);
  });

  it('refuses bad bodies with 400 invalid-body naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ events: [] }, 'body.events'],
      [{ events: Array.from({ length: 501 }, () => ({ path: '/', ip: '198.51.100.1' })) }, 'body.events'],
      [{ events: [{ ip: '198.51.100.1' }] }, 'body.events[0].path'],
      [{ events: [{ path: '/', ip: 'not-an-ip' }] }, 'body.events[0].ip'],
      [{ events: [{ path: '/', ip: '198.51.100.1', ts: '2026-10-20T00:00:00Z' }] }, 'body.events[0].ts'],
      [{ events: [{ path: '/', ip: '198.51.100.1', ts: '2026-11-23T10:06:00Z' }] }, 'body.events[0].ts'],
      [{ events: [{ path: '/', ip: '198.51.100.1', country: 'germany' }] }, 'body.events[0].country'],
      [{ events: [{ path: '/', ip: '198.51.100.1', id: 'x'.repeat(129) }] }, 'body.events[0].id'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field });
    }
    await expect.poll(async () => (await samples()).filter((s) => s.outcome === 'invalid-body').length).toBeGreaterThanOrEqual(cases.length);
  });

  it('refuses text holding U+0000, which PostgreSQL cannot store, with 400 invalid-body naming the field', async () => {
    for (const [event, field] of [
      [{ path: '/a\u0000b', ip: '198.51.100.1' }, 'body.events[0].path'],
      [{ path: '/a', ip: '198.51.100.1', ua: 'curl\u0000' }, 'body.events[0].ua'],
      [{ path: '/a', ip: '198.51.100.1', headers: { 'x-a': 'b\u0000' } }, 'body.events[0].headers.x-a'],
    ] as const) {
      const res = await send({ events: [event] });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ reason: 'invalid-body', field });
    }
  });

  it('accepts ts at the bounds: 30 days back and 5 minutes ahead', async () => {
    const res = await send({ events: [{ path: '/', ip: '198.51.100.1', ts: '2026-10-24T10:00:01Z' }, { path: '/', ip: '198.51.100.1', ts: '2026-11-23T10:04:59Z' }] });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a leap second, which JSON Schema admits and Date cannot hold, with 400 naming the field', async () => {
    const res = await send({ events: [{ path: '/', ip: '198.51.100.1', ts: '2026-11-22T23:59:60Z' }] });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-body', field: 'body.events[0].ts' });
  });

  it('refuses a body over 1 MiB with 413, and samples it', async () => {
    const raw = JSON.stringify({ events: [{ path: '/'.padEnd(1024 * 1024, 'x'), ip: '198.51.100.1' }] });
    const res = await send(null, { raw });
    expect(res.statusCode).toBe(413);
    expect(res.json().reason).toBe('payload-too-large');
    await expect.poll(async () => (await samples()).at(-1)).toMatchObject({ outcome: 'payload-too-large', tenant_slug: 'docs-mirror' });
  });

  it('refuses a disabled tenant with 403 tenant-disabled, and accepts it again once enabled', async () => {
    await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/docs-mirror/disable` });
    const res = await send({ events: [{ path: '/', ip: '198.51.100.1' }] });
    expect(res.statusCode).toBe(403);
    expect(res.json().reason).toBe('tenant-disabled');
    await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/docs-mirror/enable` });
    expect((await send({ events: [{ path: '/', ip: '198.51.100.1' }] })).statusCode).toBe(200);
  });
});

describe('secret rotation', () => {
  it('keeps the previous secret verifying for 24 hours', async () => {
    await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'rotating', name: 'Rotating' } });
    const old = (await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/rotating/rotate-secret` })).json();
    const rotated = (await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/rotating/rotate-secret` })).json();
    expect(rotated.previousValidUntil).toBe('2026-11-24T10:00:00.000Z');
    const body = { events: [{ path: '/', ip: '198.51.100.1' }] };
    expect((await send(body, { slug: 'rotating', key: rotated.signingSecret })).statusCode).toBe(200);
    expect((await send(body, { slug: 'rotating', key: old.signingSecret })).statusCode).toBe(200);
    clock.advance(24 * 3_600_000 + 1000);
    expect((await send(body, { slug: 'rotating', key: old.signingSecret })).json().reason).toBe('bad-signature');
    expect((await send(body, { slug: 'rotating', key: rotated.signingSecret })).statusCode).toBe(200);
  });
});

describe('tarpit', () => {
  it('tarpits a fingerprint at the liar threshold within 10 minutes, and the job ends it at expiry', async () => {
    const liar = (i: number) => ({ path: `/honeypot/topics/t-${i}`, ua: GPTBOT_UA, ip: '198.51.100.200', ja4: 't13d1011h2_aaaaaaaaaaaa_bbbbbbbbbbbb' });
    const first = await send({ events: [liar(1), liar(2), liar(3), liar(4)] });
    expect(first.json().events.every((e: { tarpit: { active: boolean } }) => !e.tarpit.active)).toBe(true);
    const fifth = await send({ events: [liar(5)] });
    expect(fifth.json().events[0]).toMatchObject({ uaClass: 'LIAR', tarpit: { active: true, delayMs: 8000 } });
    const rows = rowsOf<Record<string, unknown>>(await t.app.database.db.execute(sql`SELECT * FROM honeypot_tarpits`));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ reason: 'liar-flood:5/10min', delay_ms: 8000, liar_event_count: 5, active: true });

    clock.advance(29 * 60_000);
    expect((await t.call({ method: 'POST', url: `${V1}/ops/jobs/tarpit-expire/run` })).json().run.stats).toEqual({ expired: 0 });
    clock.advance(2 * 60_000);
    expect((await t.call({ method: 'POST', url: `${V1}/ops/jobs/tarpit-expire/run` })).json().run.stats).toEqual({ expired: 1 });
    const after = await send({ events: [{ path: '/', ua: CHROME_UA, ip: '198.51.100.200', ja4: 't13d1011h2_aaaaaaaaaaaa_bbbbbbbbbbbb' }] });
    expect(after.json().events[0].tarpit.active).toBe(false);
  });

  it('does not count liars older than 10 minutes', async () => {
    const liar = { path: '/old', ua: GPTBOT_UA, ip: '198.51.100.201', ja4: 't13d1011h2_cccccccccccc_dddddddddddd' };
    await send({ events: [liar, liar, liar, liar] });
    clock.advance(11 * 60_000);
    const res = await send({ events: [liar] });
    expect(res.json().events[0].tarpit.active).toBe(false);
  });
});

describe('test event', () => {
  it('pushes one signed synthetic event through ingest', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/honeypot/test-event`, payload: { tenant: 'docs-mirror' } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-observatory-test-event.v1', ok: true, tenant: 'docs-mirror', path: '/honeypot/topics/observatory-test-event' });
    const stored = rowsOf<{ id: string }>(await t.app.database.db.execute(sql`SELECT id FROM honeypot_events WHERE id = ${body.eventId}`));
    expect(stored).toHaveLength(1);
    expect((await samples()).at(-1)).toMatchObject({ outcome: 'ok', tenant_slug: 'docs-mirror', event_count: 1 });
  });

  it('answers 404 for an unknown tenant and 400 for a bad ip', async () => {
    expect((await t.call({ method: 'POST', url: `${V1}/honeypot/test-event`, payload: { tenant: 'nobody' } })).statusCode).toBe(404);
    const bad = await t.call({ method: 'POST', url: `${V1}/honeypot/test-event`, payload: { tenant: 'docs-mirror', ip: 'nope' } });
    expect(bad.statusCode).toBe(400);
  });
});
