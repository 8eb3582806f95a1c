import { sql } from 'drizzle-orm';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { signatureHeader, signPayload } from './signature.ts';

// Ingest rules against a database (docs/honeypot/README.md, "Ingest" and "Tarpit"): a tarpit ends at its
// expiry, whether or not the expire job has run yet, and a signature header is checked in full.

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
const TTL_MINUTES = 30;
const TEN_MINUTES = 10 * 60_000;
let t: TestApp;
let secret: string;

const unixNow = () => Math.floor(clock.now().getTime() / 1000);
const send = (body: unknown) => signedIngest(t, { slug: 'trap', secret, unixSeconds: unixNow(), body });

/** A GPTBot user agent from an address outside OpenAI's ranges: a LIAR. */
const JA4 = 't13d1011h2_aaaaaaaaaaaa_bbbbbbbbbbbb';
const liar = (i: number) => ({ id: `liar-${i}`, path: `/honeypot/topics/t-${i}`, ua: GPTBOT_UA, ip: '198.51.100.200', ja4: JA4 });
const browser = (i: number) => ({ id: `browser-${i}`, path: '/', ua: CHROME_UA, ip: '198.51.100.200', ja4: JA4 });

type TarpitRow = { id: string; active: boolean; triggered_at: unknown; expires_at: unknown; ended_at: unknown; reason: string; liar_event_count: number; delay_ms: number };
const tarpitRows = async () =>
  rowsOf<TarpitRow>(await t.app.database.db.execute(sql`SELECT * FROM honeypot_tarpits ORDER BY triggered_at`)).map((r) => ({
    ...r,
    triggered_at: new Date(String(r.triggered_at instanceof Date ? r.triggered_at.toISOString() : r.triggered_at)).toISOString(),
    expires_at: new Date(String(r.expires_at instanceof Date ? r.expires_at.toISOString() : r.expires_at)).toISOString(),
    ended_at: r.ended_at === null ? null : new Date(String(r.ended_at instanceof Date ? r.ended_at.toISOString() : r.ended_at)).toISOString(),
  }));

// The app starts in the first test's beforeEach, not in a beforeAll: an app that cannot start (a
// mutant that breaks createIngestService) then fails every test, where a failing beforeAll only
// skips them, which mutation testing counts as a survivor.
let started: Promise<TestApp> | undefined;
async function startOnce(): Promise<TestApp> {
  const app = await startTestApp({
    clock,
    env: { OBSERVATORY_LIAR_THRESHOLD: '5', OBSERVATORY_TARPIT_TTL_MINUTES: String(TTL_MINUTES) },
  });
  secret = await createTenant(app, 'trap');
  return app;
}
// Starting an app on a busy machine (mutation runs beside other work) can take long.
beforeEach(async () => {
  t = await (started ??= startOnce());
}, 180_000);
afterAll(async () => (await started?.catch(() => undefined))?.close());

describe('a tarpit', () => {
  let openedAt: Date;

  it('opens on the fifth LIAR event within 10 minutes, until TTL minutes later', async () => {
    const first = await send({ events: [liar(1), liar(2), liar(3), liar(4)] });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().events.map((e: { uaClass: string; tarpit: unknown }) => [e.uaClass, e.tarpit])).toEqual(
      Array.from({ length: 4 }, () => ['LIAR', { active: false, delayMs: 0 }]),
    );
    clock.advance(60_000);
    openedAt = clock.now();
    const fifth = await send({ events: [liar(5)] });
    expect(fifth.json().events[0].tarpit).toEqual({ active: true, delayMs: 8000 });
    expect(await tarpitRows()).toEqual([
      expect.objectContaining({
        active: true,
        reason: 'liar-flood:5/10min',
        liar_event_count: 5,
        delay_ms: 8000,
        triggered_at: openedAt.toISOString(),
        expires_at: new Date(openedAt.getTime() + TTL_MINUTES * 60_000).toISOString(),
        ended_at: null,
      }),
    ]);
    // Every event of the fingerprint is delayed while it lasts; another fingerprint from the same address is not.
    clock.advance(TTL_MINUTES * 60_000 - 60_000);
    const later = await send({ events: [liar(11), browser(1)] });
    expect(later.json().events.map((e: { tarpit: unknown }) => e.tarpit)).toEqual([{ active: true, delayMs: 8000 }, { active: false, delayMs: 0 }]);
  });

  it('no longer delays its fingerprint from its expiry on, before the expire job has run', async () => {
    clock.set(new Date(openedAt.getTime() + TTL_MINUTES * 60_000));
    expect((await send({ events: [liar(12)] })).json().events[0].tarpit).toEqual({ active: false, delayMs: 0 });
    // Still marked active: the job has not run.
    expect((await tarpitRows())[0]!.active).toBe(true);
  });

  it('is ended when a new flood of the same fingerprint opens a new one', async () => {
    clock.advance(60_000);
    const reopenedAt = clock.now();
    const flood = await send({ events: [liar(6), liar(7), liar(8), liar(9), liar(10)] });
    expect(flood.json().events.map((e: { tarpit: { active: boolean } }) => e.tarpit.active)).toEqual([true, true, true, true, true]);
    const [stale, fresh] = await tarpitRows();
    expect(stale).toMatchObject({ active: false, ended_at: reopenedAt.toISOString() });
    // liar-11 and liar-12 (sent within the last 10 minutes) count toward it with the five.
    expect(fresh).toMatchObject({ active: true, triggered_at: reopenedAt.toISOString(), liar_event_count: 7, reason: 'liar-flood:7/10min', ended_at: null });
  });

  it('is ended by the expire job at its expiry, not a moment before', async () => {
    const [, fresh] = await tarpitRows();
    const expiresAt = new Date(fresh!.expires_at as string);
    expect(await t.app.honeypot.ingest.expireTarpits(new Date(expiresAt.getTime() - 1))).toBe(0);
    expect(await t.app.honeypot.ingest.expireTarpits(expiresAt)).toBe(1);
    expect((await tarpitRows()).map((r) => r.active)).toEqual([false, false]);
    expect(await t.app.honeypot.ingest.expireTarpits(expiresAt)).toBe(0);
  });
});

describe('what counts toward a tarpit', () => {
  /** Five events of one fingerprint (its own JA4), LIARs unless `ip` says otherwise; `ts` in ms from now. */
  const batch = (ja4: string, events: { ip?: string; ts?: number }[]) => ({
    events: events.map((e, i) => ({
      id: `${ja4}-${i}`,
      path: '/',
      ua: GPTBOT_UA,
      ip: e.ip ?? '198.51.100.210',
      ja4,
      ...(e.ts === undefined ? {} : { ts: new Date(clock.now().getTime() + e.ts).toISOString() }),
    })),
  });
  const lastTarpit = async (ja4: string, events: { ip?: string; ts?: number }[]) => {
    const res = await send(batch(ja4, events));
    expect(res.statusCode, res.body).toBe(200);
    return res.json().events.at(-1).tarpit.active as boolean;
  };
  const fresh = [{}, {}, {}, {}];

  it('only LIAR events of the fingerprint: the same agent verified from its vendor\'s range does not count', async () => {
    expect(await lastTarpit('t13d1011h2_111111111111_000000000000', [...fresh, { ip: GPTBOT_IP }])).toBe(false);
    expect(await lastTarpit('t13d1011h2_222222222222_000000000000', [...fresh, {}])).toBe(true);
  });

  it('only events stamped within the last 10 minutes, the 10th minute included', async () => {
    expect(await lastTarpit('t13d1011h2_333333333333_000000000000', [...fresh, { ts: -TEN_MINUTES - 1 }])).toBe(false);
    expect(await lastTarpit('t13d1011h2_444444444444_000000000000', [...fresh, { ts: -TEN_MINUTES }])).toBe(true);
  });

  it('events stamped up to 5 minutes ahead (a sender\'s clock running fast) count too', async () => {
    expect(await lastTarpit('t13d1011h2_555555555555_000000000000', [...fresh, { ts: 5 * 60_000 }])).toBe(true);
  });
});

describe('several v1 signatures', () => {
  it('accepts a request whose matching v1 value is not the first one', async () => {
    const raw = JSON.stringify({ events: [{ id: 'multi-1', path: '/', ua: CHROME_UA, ip: '203.0.113.9' }] });
    const ts = unixNow();
    const good = signPayload(secret, ts, raw);
    const headers = (signature: string) => ({ 'content-type': 'application/json', 'x-observatory-tenant': 'trap', 'x-observatory-signature': signature });
    const post = (signature: string) => t.call({ method: 'POST', url: '/api/observatory/honeypot/ingest', token: null, payload: raw, headers: headers(signature) });
    const junk = 'c'.repeat(64);
    expect((await post(`t=${ts},v1=${junk},v1=${good}`)).json()).toMatchObject({ accepted: 1 });
    expect((await post(`t=${ts},v1=${junk},v1=${'d'.repeat(64)}`)).json()).toMatchObject({ reason: 'bad-signature' });
    expect((await post(signatureHeader(secret, ts, raw))).json()).toMatchObject({ accepted: 0, duplicates: 1 });
  });
});
