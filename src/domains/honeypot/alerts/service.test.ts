import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SETTLE_MS } from '../../../platform/alerting/plan.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { type Receiver, startReceiver } from '../../../../test/helpers/http-receiver.ts';
import { runJob as runJobNow, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { CHROME_UA, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';

// What honeypot rules add to the engine's lifecycle (src/platform/alerting/lifecycle.test.ts runs
// that for every kind): rules per tenant, the predicate union and what each kind reads (liar rate,
// counts by class, fingerprints reaching n events, tarpits), and how a firing is worded
// (docs/honeypot/alerts.md).

const ALERTS = `${V1}/honeypot/alerts`;
const MINUTE = 60_000;
const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
let rx: Receiver;
const tenantSecrets = new Map<string, string>();

/** A GPTBot user agent; from an IP outside OpenAI's published ranges it is a LIAR. */
const HOOK_SECRET = 'hook-secret-0123456789abcdef';
/** The part of a chat webhook URL that is its credential; it must never be read back. */
const SLACK_PATH = '/slack/services/T0001/B0002/XyZsecretPATH42';

const liar = (n: number, ja4 = 't13d1516h2_8daaf6152771_02713d6af862') => ({ path: `/honeypot/topics/t-${n}`, ua: GPTBOT_UA, ip: `198.51.100.${n % 250}`, ja4 });
const browser = (n: number, ja4 = 't13d1516h2_aaaaaaaaaaaa_bbbbbbbbbbbb') => ({ path: `/q/${n}`, ua: CHROME_UA, ip: `203.0.113.${n % 250}`, ja4 });

async function addTenant(slug: string): Promise<void> {
  const res = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug, name: slug } });
  expect(res.statusCode, res.body).toBe(200);
  tenantSecrets.set(slug, res.json().signingSecret);
}

async function ingest(slug: string, events: object[]) {
  const res = await signedIngest(t, { slug, secret: tenantSecrets.get(slug)!, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { events: { uaClass: string; fingerprintId: string; tarpit: { active: boolean } }[] };
}

async function createRule(body: Record<string, unknown>): Promise<string> {
  const res = await t.call({ method: 'POST', url: ALERTS, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ schema: 'svc-observatory-alert-create.v1', ok: true });
  return res.json().id;
}

async function ruleView(id: string) {
  const res = await t.call({ method: 'GET', url: ALERTS });
  return res.json().rules.find((r: { id: string }) => r.id === id);
}

const runJob = (job: string) => runJobNow(t, job);
const evaluate = () => runJob('alert-evaluate');
const dispatch = () => runJob('outbound-dispatch');

async function deliveries(ruleId: string) {
  return rowsOf<{ id: string; source: string; status: string; attempts: number; last_status: number | null; payload: { title: string; details: Record<string, unknown> } }>(
    await t.app.database.db.execute(
      sql`SELECT id, source, status, attempts, last_status, payload FROM outbound_deliveries WHERE source_id = ${ruleId} ORDER BY created_at, id`,
    ),
  );
}

const hook = (path: string) => ({ kind: 'webhook', url: `${rx.origin}${path}`, secret: HOOK_SECRET });

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port}`,
      OBSERVATORY_LIAR_THRESHOLD: '5',
      OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000',
    },
  });
  for (const slug of ['alerts-a', 'alerts-b']) await addTenant(slug);
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
// Each test sees only its own rules in the job's stats.
afterEach(async () => {
  await t.app.database.db.execute(sql`UPDATE honeypot_alert_rules SET enabled = false`);
  rx.respond = () => ({ status: 200 });
});

describe('creating and listing rules', () => {
  it('creates rules and lists all of them, enabled and disabled, with destinations redacted', async () => {
    const id = await createRule({
      tenant: 'alerts-a',
      name: 'Liar flood',
      predicate: { kind: 'liar_rate_above', pct: 30, windowMinutes: 15 },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/create')],
    });
    const off = await createRule({
      tenant: 'alerts-b',
      name: 'GPTBot volume',
      enabled: false,
      predicate: { kind: 'event_count_above', count: 1000, windowMinutes: 60, uaClass: 'KNOWN_LLM_AGENT' },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }],
    });

    const all = await t.call({ method: 'GET', url: ALERTS });
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ schema: 'svc-observatory-alerts.v1', tenant: null });
    const ids = all.json().rules.map((r: { id: string }) => r.id);
    expect(ids).toEqual(expect.arrayContaining([id, off]));
    expect(all.body).not.toContain(HOOK_SECRET);
    expect(all.body).not.toContain('XyZsecretPATH42');

    const one = await t.call({ method: 'GET', url: `${ALERTS}?tenant=alerts-a` });
    expect(one.json().tenant).toBe('alerts-a');
    expect(one.json().rules.map((r: { tenant: string }) => r.tenant)).toEqual(one.json().rules.map(() => 'alerts-a'));
    const rule = one.json().rules.find((r: { id: string }) => r.id === id);
    expect(rule).toEqual({
      id,
      tenant: 'alerts-a',
      name: 'Liar flood',
      enabled: true,
      predicate: { kind: 'liar_rate_above', pct: 30, windowMinutes: 15, minEvents: 20 },
      destinations: [
        { kind: 'slack', url: `${rx.origin}/…` },
        { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
      ],
      createdAt: clock.now().toISOString(),
      lastFiredAt: null,
      silenceUntil: null,
      evaluatedUntil: null,
    });
    const b = await t.call({ method: 'GET', url: `${ALERTS}?tenant=alerts-b` });
    expect(b.json().rules).toEqual([expect.objectContaining({ id: off, enabled: false, predicate: { kind: 'event_count_above', count: 1000, windowMinutes: 60, uaClass: 'KNOWN_LLM_AGENT' } })]);
  });

  it('refuses bad predicates with 400 and the reason', async () => {
    const base = { tenant: 'alerts-a', name: 'Bad', destinations: [hook('/hook/bad')] };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...base, predicate: { kind: 'liar_rate_over', pct: 30, windowMinutes: 15 } }, 'invalid-body', 'body.predicate.kind'],
      [{ ...base, predicate: { kind: 'liar_rate_above', windowMinutes: 15 } }, 'invalid-body', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'event_count_above', count: 5, windowMinutes: 15, pct: 3 } }, 'invalid-body', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'event_count_above', count: 5, windowMinutes: 15, uaClass: 'ROBOT' } }, 'invalid-body', 'body.predicate.uaClass'],
      [{ ...base, predicate: { kind: 'liar_rate_above', pct: 30, windowMinutes: 2 } }, 'invalid-predicate', 'body.predicate.windowMinutes'],
      [{ ...base, predicate: { kind: 'liar_rate_above', pct: 120, windowMinutes: 15 } }, 'invalid-predicate', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'new_fingerprint_cluster', minEvents: 0 } }, 'invalid-predicate', 'body.predicate.minEvents'],
    ];
    for (const [body, reason, field] of cases) {
      const res = await t.call({ method: 'POST', url: ALERTS, payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json(), JSON.stringify(body)).toMatchObject({ schema: 'svc-error.v1', reason, field });
    }
    const kind = await t.call({ method: 'POST', url: ALERTS, payload: cases[0]![0] });
    expect(kind.json().human).toContain('liar_rate_above, event_count_above, new_fingerprint_cluster, tarpit_triggered');
    const window = await t.call({ method: 'POST', url: ALERTS, payload: cases[4]![0] });
    expect(window.json().human).toBe('predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 2).');
    const listed = (await t.call({ method: 'GET', url: ALERTS })).json().rules.filter((r: { name: string }) => r.name === 'Bad');
    expect(listed).toEqual([]);
  });

  it('answers 404 for an unknown tenant', async () => {
    const create = await t.call({ method: 'POST', url: ALERTS, payload: { tenant: 'nobody', name: 'x', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/h')] } });
    expect(create.statusCode).toBe(404);
    expect(create.json()).toMatchObject({ reason: 'not-found' });
    expect((await t.call({ method: 'GET', url: `${ALERTS}?tenant=nobody` })).statusCode).toBe(404);
  });
});

describe('changing rules', () => {
  it('does not evaluate a disabled rule, and a re-enabled rule does not report what happened while it was off', async () => {
    await addTenant('alerts-toggle');
    const id = await createRule({ tenant: 'alerts-toggle', name: 'Toggle', enabled: false, predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/toggle')] });
    await ingest('alerts-toggle', [1, 2, 3, 4, 5].map((n) => liar(n, 't13d0000h2_toggle000001_000000000001')));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 });
    const enabled = await t.call({ method: 'POST', url: `${ALERTS}/${id}`, payload: { enabled: true } });
    expect(enabled.json().rule.evaluatedUntil).toBe(clock.now().toISOString());
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0 });
    expect(await deliveries(id)).toEqual([]);
  });
});

describe('evaluation and fan-out', () => {
  it('fires a liar-rate rule as critical, naming the rate and the numbers', async () => {
    await addTenant('liar-site');
    const id = await createRule({
      tenant: 'liar-site',
      name: 'Liar flood',
      predicate: { kind: 'liar_rate_above', pct: 50, windowMinutes: 15, minEvents: 5 },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/liar')],
    });
    const sent = await ingest('liar-site', [...[1, 2, 3, 4, 5, 6].map((n) => liar(n)), browser(1)]);
    expect(sent.events.filter((e) => e.uaClass === 'LIAR')).toHaveLength(6);

    clock.advance(2 * MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0 });
    expect(await dispatch()).toEqual({ sent: 2, retried: 0, failed: 0 });
    const slack = rx.to(SLACK_PATH).at(-1)!;
    const text = JSON.parse(slack.body).text as string;
    expect(text).toMatch(/^\*\[CRITICAL\] Liar flood: liar rate 85\.7% on liar-site\*\n/);
    expect(text).toContain('6 of 7 events received on liar-site');
    const webhook = rx.to('/hook/liar').at(-1)!;
    expect(JSON.parse(webhook.body)).toMatchObject({
      schema: 'svc-alert-notification.v1',
      severity: 'critical',
      source: 'honeypot-rule',
      sourceId: id,
      firedAt,
      title: 'Liar flood: liar rate 85.7% on liar-site',
      details: { tenant: 'liar-site', rule: { id, name: 'Liar flood' }, observed: { events: 7, liars: 6, liarRatePct: 85.7 } },
    });
  });

  it('suppresses a matching rule while silenced and consumes what it covered', async () => {
    await addTenant('silent-site');
    const id = await createRule({ tenant: 'silent-site', name: 'Tarpits', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/silent')] });
    clock.advance(1000); // rules see only what happens after their creation
    const until = new Date(clock.now().getTime() + 10 * MINUTE).toISOString();
    expect((await t.call({ method: 'POST', url: `${ALERTS}/${id}`, payload: { silenceUntil: until } })).statusCode).toBe(200);

    const flood = await ingest('silent-site', [1, 2, 3, 4, 5].map((n) => liar(n, 't13d1111h2_silent000001_000000000001')));
    expect(flood.events.at(-1)!.tarpit.active).toBe(true);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 0, silenced: 1, cooling: 0, skipped: 0, failed: 0 });
    expect(await ruleView(id)).toMatchObject({ lastFiredAt: null, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    expect(await deliveries(id)).toEqual([]);

    // Once the silence ends, the suppressed tarpit is not reported; a new one is.
    clock.set(until);
    expect(await evaluate()).toMatchObject({ fired: 0, silenced: 0 });
    const second = await ingest('silent-site', [6, 7, 8, 9, 10].map((n) => liar(n, 't13d2222h2_silent000002_000000000002')));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const [delivery] = await deliveries(id);
    expect(delivery!.payload.details).toMatchObject({ observed: { total: 1, tarpits: [{ fingerprintId: second.events[0]!.fingerprintId, reason: 'liar-flood:5/10min' }] } });
    expect(delivery!.payload.title).toBe('Tarpits: 1 tarpit opened on silent-site');
  });

  it('reports a fingerprint once, when it reaches minEvents', async () => {
    await addTenant('fp-site');
    const id = await createRule({ tenant: 'fp-site', name: 'New clients', predicate: { kind: 'new_fingerprint_cluster', minEvents: 2 }, destinations: [hook('/hook/fp')] });
    clock.advance(2 * MINUTE);
    const a = await ingest('fp-site', [browser(1, 't13d3333h2_fpa000000001_000000000001')]);
    const b = await ingest('fp-site', [browser(2, 't13d4444h2_fpb000000002_000000000002'), browser(3, 't13d4444h2_fpb000000002_000000000002')]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    expect((await deliveries(id))[0]!.payload.details).toMatchObject({
      observed: { total: 1, fingerprints: [{ fingerprintId: b.events[0]!.fingerprintId, eventsInPeriod: 2, eventsTotal: 2 }] },
    });

    // A's second event arrives in the next period: now A crosses; B (already past 2) does not count again.
    await ingest('fp-site', [browser(4, 't13d3333h2_fpa000000001_000000000001'), browser(5, 't13d4444h2_fpb000000002_000000000002')]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const all = await deliveries(id);
    expect(all).toHaveLength(2);
    expect(all[1]!.payload.details).toMatchObject({ observed: { total: 1, fingerprints: [{ fingerprintId: a.events[0]!.fingerprintId, eventsInPeriod: 1, eventsTotal: 2 }] } });

    await ingest('fp-site', [browser(6, 't13d3333h2_fpa000000001_000000000001')]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0 });
  });

  it('counts events of one class in the window', async () => {
    await addTenant('count-site');
    const id = await createRule({ tenant: 'count-site', name: 'Browsers', predicate: { kind: 'event_count_above', count: 2, windowMinutes: 5, uaClass: 'BROWSER' }, destinations: [hook('/hook/count')] });
    clock.advance(2 * MINUTE);
    await ingest('count-site', [browser(1), browser(2), liar(1), liar(2), liar(3)]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 0 });
    await ingest('count-site', [browser(3)]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    expect((await deliveries(id))[0]!.payload).toMatchObject({ title: 'Browsers: 3 BROWSER events on count-site', details: { observed: { events: 3 } } });
  });
});
