import { createHmac } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { closedPort, type Receiver, type ReceivedRequest, startReceiver } from '../../../test/helpers/http-receiver.ts';
import { ADMIN_TOKEN, runJob as runJobNow, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { isSilenced, matches, planEvaluation, SETTLE_MS } from './alerts.ts';
import { checkPredicate, normalizePredicate, type Predicate } from './alerts.predicates.ts';
import { CHROME_UA, GPTBOT_UA, signedIngest } from '../../../test/helpers/honeypot.ts';

const ALERTS = `${V1}/honeypot/alerts`;
const MINUTE = 60_000;
const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
let rx: Receiver;
let downPort: number;
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

/** Checks `X-Observatory-Signature: t=…,v1=…` over the raw body with the webhook secret. */
function verifySignature(request: ReceivedRequest, secret: string): number {
  const header = String(request.headers['x-observatory-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  expect(match, header).not.toBeNull();
  const expected = createHmac('sha256', secret).update(`${match![1]}.${request.body}`).digest('hex');
  expect(match![2]).toBe(expected);
  return Number(match![1]);
}

const hook = (path: string) => ({ kind: 'webhook', url: `${rx.origin}${path}`, secret: HOOK_SECRET });

beforeAll(async () => {
  rx = await startReceiver();
  // Outbound ports are limited to the allow-list: the receiver's random port, and a port where
  // nothing listens (taken now, so the list can hold it).
  downPort = await closedPort();
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port},${downPort}`,
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

describe('predicates (pure)', () => {
  const at = (iso: string) => new Date(iso);
  const liarRule: Predicate = { kind: 'liar_rate_above', pct: 30, windowMinutes: 15, minEvents: 20 };

  it('fills defaults and checks allowed values with a sentence naming the field', () => {
    expect(normalizePredicate({ kind: 'liar_rate_above', pct: 30, windowMinutes: 15 })).toEqual(liarRule);
    expect(normalizePredicate({ kind: 'new_fingerprint_cluster' })).toEqual({ kind: 'new_fingerprint_cluster', minEvents: 1 });
    expect(checkPredicate(liarRule)).toBeNull();
    expect(checkPredicate({ ...liarRule, windowMinutes: 4 })).toMatchObject({ field: 'predicate.windowMinutes' });
    expect(checkPredicate({ ...liarRule, windowMinutes: 1441 })?.human).toContain('from 5 to 1440 minutes');
    expect(checkPredicate({ ...liarRule, pct: 100 })).toMatchObject({ field: 'predicate.pct' });
    expect(checkPredicate({ ...liarRule, pct: -1 })).toMatchObject({ field: 'predicate.pct' });
    expect(checkPredicate({ ...liarRule, minEvents: 0 })).toMatchObject({ field: 'predicate.minEvents' });
    expect(checkPredicate({ kind: 'event_count_above', count: -1, windowMinutes: 5 })).toMatchObject({ field: 'predicate.count' });
    expect(checkPredicate({ kind: 'event_count_above', count: 1, windowMinutes: 5, uaClass: 'ROBOT' })).toMatchObject({ field: 'predicate.uaClass' });
    expect(checkPredicate({ kind: 'new_fingerprint_cluster', minEvents: 1001 })).toMatchObject({ field: 'predicate.minEvents' });
    expect(checkPredicate({ kind: 'tarpit_triggered' })).toBeNull();
  });

  it('plans: nothing before the settle margin, sliding windows, cooldown of one window after a firing', () => {
    const createdAt = at('2026-11-23T10:00:00Z');
    expect(planEvaluation({ predicate: liarRule, createdAt, evaluatedUntil: null, lastFiredAt: null }, at('2026-11-23T10:00:59Z'))).toEqual({ action: 'skip' });
    const plan = planEvaluation({ predicate: liarRule, createdAt, evaluatedUntil: null, lastFiredAt: null }, at('2026-11-23T10:05:00Z'));
    expect(plan).toEqual({
      action: 'evaluate',
      period: { from: createdAt, to: at('2026-11-23T10:04:00Z') },
      scope: { from: at('2026-11-23T09:49:00Z'), to: at('2026-11-23T10:04:00Z') },
    });
    const fired = at('2026-11-23T10:05:00Z');
    expect(planEvaluation({ predicate: liarRule, createdAt, evaluatedUntil: at('2026-11-23T10:04:00Z'), lastFiredAt: fired }, at('2026-11-23T10:19:59Z')).action).toBe('cooldown');
    expect(planEvaluation({ predicate: liarRule, createdAt, evaluatedUntil: at('2026-11-23T10:18:00Z'), lastFiredAt: fired }, at('2026-11-23T10:20:00Z')).action).toBe('evaluate');
    // Incremental kinds read exactly the period since the last evaluation, and have no cooldown.
    const tarpit = planEvaluation(
      { predicate: { kind: 'tarpit_triggered' }, createdAt, evaluatedUntil: at('2026-11-23T10:04:00Z'), lastFiredAt: fired },
      at('2026-11-23T10:06:00Z'),
    );
    expect(tarpit).toEqual({ action: 'evaluate', period: { from: at('2026-11-23T10:04:00Z'), to: at('2026-11-23T10:05:00Z') }, scope: { from: at('2026-11-23T10:04:00Z'), to: at('2026-11-23T10:05:00Z') } });
    expect(SETTLE_MS).toBe(MINUTE);
  });

  it('matches strictly above the threshold and only with enough events', () => {
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 20, liars: 7 })).toBe(true);
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 20, liars: 6 })).toBe(false); // exactly 30%
    expect(matches(liarRule, { kind: 'liar_rate_above', events: 19, liars: 19 })).toBe(false); // below minEvents
    expect(matches({ kind: 'event_count_above', count: 0, windowMinutes: 5 }, { kind: 'event_count_above', events: 0 })).toBe(false);
    expect(matches({ kind: 'event_count_above', count: 0, windowMinutes: 5 }, { kind: 'event_count_above', events: 1 })).toBe(true);
    expect(matches({ kind: 'tarpit_triggered' }, { kind: 'tarpit_triggered', total: 0, tarpits: [] })).toBe(false);
    expect(isSilenced(at('2026-11-23T10:00:00Z'), at('2026-11-23T09:59:59Z'))).toBe(true);
    expect(isSilenced(at('2026-11-23T10:00:00Z'), at('2026-11-23T10:00:00Z'))).toBe(false);
    expect(isSilenced(null, at('2026-11-23T10:00:00Z'))).toBe(false);
  });
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

  it('audits the creation with redacted destinations', async () => {
    const id = await createRule({ tenant: 'alerts-a', name: 'Audited', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/audited')] });
    const rows = rowsOf<{ verb: string; target: string; after: Record<string, unknown> }>(
      await t.app.database.db.execute(sql`SELECT verb, target, after FROM operator_audit WHERE target = ${`alert-rule:${id}`}`),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ verb: 'alert.create', after: { id, tenant: 'alerts-a', destinations: [{ kind: 'webhook', url: `${rx.origin}/…`, secretSet: true }] } });
    expect(JSON.stringify(rows)).not.toContain(HOOK_SECRET);
  });

  it('refuses bad predicates and destinations with 400 and the reason', async () => {
    const base = { tenant: 'alerts-a', name: 'Bad', destinations: [hook('/hook/bad')] };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...base, predicate: { kind: 'liar_rate_over', pct: 30, windowMinutes: 15 } }, 'invalid-body', 'body.predicate.kind'],
      [{ ...base, predicate: { kind: 'liar_rate_above', windowMinutes: 15 } }, 'invalid-body', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'event_count_above', count: 5, windowMinutes: 15, pct: 3 } }, 'invalid-body', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'event_count_above', count: 5, windowMinutes: 15, uaClass: 'ROBOT' } }, 'invalid-body', 'body.predicate.uaClass'],
      [{ ...base, predicate: { kind: 'liar_rate_above', pct: 30, windowMinutes: 2 } }, 'invalid-predicate', 'body.predicate.windowMinutes'],
      [{ ...base, predicate: { kind: 'liar_rate_above', pct: 120, windowMinutes: 15 } }, 'invalid-predicate', 'body.predicate.pct'],
      [{ ...base, predicate: { kind: 'new_fingerprint_cluster', minEvents: 0 } }, 'invalid-predicate', 'body.predicate.minEvents'],
      [{ ...base, predicate: { kind: 'tarpit_triggered' }, destinations: [] }, 'invalid-body', 'body.destinations'],
      [{ ...base, predicate: { kind: 'tarpit_triggered' }, destinations: [{ kind: 'webhook', url: `${rx.origin}/x`, secret: 'short' }] }, 'invalid-body', 'body.destinations[0].secret'],
      [{ ...base, predicate: { kind: 'tarpit_triggered' }, destinations: [{ kind: 'metrics' }] }, 'invalid-destinations', 'body.destinations'],
      [{ ...base, predicate: { kind: 'tarpit_triggered' }, destinations: [{ kind: 'ci_dispatch' }] }, 'invalid-destinations', 'body.destinations'],
      [{ ...base, predicate: { kind: 'tarpit_triggered' }, destinations: [{ kind: 'slack', url: 'http://user:pw@example.com/x' }] }, 'invalid-destinations', 'body.destinations'],
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
    const metrics = await t.call({ method: 'POST', url: ALERTS, payload: cases[9]![0] });
    expect(metrics.json().human).toContain('OBSERVATORY_METRICS_FORWARD_URL');
    const listed = (await t.call({ method: 'GET', url: ALERTS })).json().rules.filter((r: { name: string }) => r.name === 'Bad');
    expect(listed).toEqual([]);
  });

  it('refuses a loopback URL where private outbound is not allowed', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0' });
    const res = await strict.server.inject({
      method: 'POST',
      url: ALERTS,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { tenant: 'alerts-a', name: 'Loopback', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/strict')] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-destinations', field: 'body.destinations' });
    expect(res.json().human).toMatch(/^A destination cannot be used: destinations\[0\] \(webhook\): /);
  });

  it('answers 404 for an unknown tenant or rule', async () => {
    const create = await t.call({ method: 'POST', url: ALERTS, payload: { tenant: 'nobody', name: 'x', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/h')] } });
    expect(create.statusCode).toBe(404);
    expect(create.json()).toMatchObject({ reason: 'not-found' });
    expect((await t.call({ method: 'GET', url: `${ALERTS}?tenant=nobody` })).statusCode).toBe(404);
    const update = await t.call({ method: 'POST', url: `${ALERTS}/3f0e4d2c-1b0a-4987-8654-3210fedcba98`, payload: { enabled: false } });
    expect(update.statusCode).toBe(404);
  });

  it('checks the scope of each endpoint', async () => {
    const reader = await t.tokenWith(['read:alerts']);
    const writer = await t.tokenWith(['write:alerts']);
    const body = { tenant: 'alerts-a', name: 'Scoped', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/scoped')] };
    expect((await t.call({ method: 'GET', url: ALERTS, token: reader })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: ALERTS, token: writer })).json()).toMatchObject({ reason: 'forbidden' });
    expect((await t.call({ method: 'POST', url: ALERTS, token: reader, payload: body })).statusCode).toBe(403);
    const created = await t.call({ method: 'POST', url: ALERTS, token: writer, payload: body });
    expect(created.statusCode).toBe(200);
    const url = `${ALERTS}/${created.json().id}`;
    expect((await t.call({ method: 'POST', url, token: reader, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url, token: writer, payload: { name: 'Scoped, renamed' } })).statusCode).toBe(200);
  });
});

describe('changing rules', () => {
  it('renames, silences and disables a rule, audits each change, and skips a no-op', async () => {
    const id = await createRule({ tenant: 'alerts-a', name: 'Changing', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/change')] });
    const url = `${ALERTS}/${id}`;
    const silenceUntil = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    const res = await t.call({ method: 'POST', url, payload: { name: 'Changed', silenceUntil, enabled: false } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-observatory-alert.v1', rule: { id, name: 'Changed', enabled: false, silenceUntil } });
    expect(res.body).not.toContain(HOOK_SECRET);
    expect(await ruleView(id)).toMatchObject({ name: 'Changed', enabled: false, silenceUntil });

    expect((await t.call({ method: 'POST', url, payload: { name: 'Changed', silenceUntil } })).statusCode).toBe(200);
    const cleared = await t.call({ method: 'POST', url, payload: { silenceUntil: null } });
    expect(cleared.json().rule.silenceUntil).toBeNull();
    const audits = rowsOf<{ verb: string; before: { name: string }; after: { name: string; silenceUntil: string | null } }>(
      await t.app.database.db.execute(sql`SELECT verb, before, after FROM operator_audit WHERE target = ${`alert-rule:${id}`} ORDER BY seq_no`),
    );
    expect(audits.map((a) => a.verb)).toEqual(['alert.create', 'alert.update', 'alert.update']);
    expect(audits[1]).toMatchObject({ before: { name: 'Changing' }, after: { name: 'Changed', silenceUntil } });
    expect(audits[2]!.after.silenceUntil).toBeNull();

    const bad = await t.call({ method: 'POST', url, payload: { silenceUntil: 'tomorrow' } });
    expect(bad.json()).toMatchObject({ reason: 'invalid-body', field: 'body.silenceUntil' });
  });

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
  it('fires a liar-rate rule, enqueues one delivery per destination, and sends Slack and signed webhook bodies', async () => {
    await addTenant('liar-site');
    const id = await createRule({
      tenant: 'liar-site',
      name: 'Liar flood',
      predicate: { kind: 'liar_rate_above', pct: 50, windowMinutes: 15, minEvents: 5 },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/liar')],
    });
    const sent = await ingest('liar-site', [...[1, 2, 3, 4, 5, 6].map((n) => liar(n)), browser(1)]);
    expect(sent.events.filter((e) => e.uaClass === 'LIAR')).toHaveLength(6);

    // Received just now: inside the settle margin, so not yet evaluated.
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 });
    clock.advance(2 * MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0 });
    expect(await ruleView(id)).toMatchObject({ lastFiredAt: firedAt, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    const queued = await deliveries(id);
    expect(queued.map((d) => [d.source, d.status, d.attempts])).toEqual([
      ['honeypot-rule', 'pending', 0],
      ['honeypot-rule', 'pending', 0],
    ]);

    expect(await dispatch()).toEqual({ sent: 2, retried: 0, failed: 0 });
    const slack = rx.to(SLACK_PATH).at(-1)!;
    const text = JSON.parse(slack.body).text as string;
    expect(text).toMatch(/^\*\[CRITICAL\] Liar flood: liar rate 85\.7% on liar-site\*\n/);
    expect(text).toContain('6 of 7 events received on liar-site');
    const webhook = rx.to('/hook/liar').at(-1)!;
    expect(verifySignature(webhook, HOOK_SECRET)).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(queued.map((d) => d.id)).toContain(webhook.headers['x-observatory-delivery']);
    expect(JSON.parse(webhook.body)).toMatchObject({
      schema: 'svc-alert-notification.v1',
      severity: 'critical',
      source: 'honeypot-rule',
      sourceId: id,
      firedAt,
      details: { tenant: 'liar-site', rule: { id, name: 'Liar flood' }, observed: { events: 7, liars: 6, liarRatePct: 85.7 } },
    });
    expect((await deliveries(id)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('sends a firing in the scheduler tick that raised it: outbound-dispatch runs after every job that enqueues', async () => {
    const order = t.app.scheduler.jobs().map((j) => j.name);
    const dispatchAt = order.indexOf('outbound-dispatch');
    for (const enqueuer of ['alert-evaluate', 'empire-alert-evaluate', 'cost-budget-evaluate']) {
      expect(order.indexOf(enqueuer), enqueuer).toBeGreaterThanOrEqual(0);
      expect(order.indexOf(enqueuer), enqueuer).toBeLessThan(dispatchAt);
    }
  });

  it('fires a matching windowed rule at most once per window, and not again while nothing new arrives', async () => {
    await addTenant('repeat-site');
    const id = await createRule({
      tenant: 'repeat-site',
      name: 'Repeat',
      predicate: { kind: 'liar_rate_above', pct: 50, windowMinutes: 15, minEvents: 3 },
      destinations: [hook('/hook/repeat')],
    });
    await ingest('repeat-site', [1, 2, 3].map((n) => liar(n)));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const firstFiring = clock.now().getTime();

    // Still matching (new liars arrive), but within one window of the firing: no second notice.
    clock.advance(30_000);
    await ingest('repeat-site', [4, 5, 6].map((n) => liar(n)));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0, cooling: 1 });
    clock.set(new Date(firstFiring + 14 * MINUTE));
    expect(await evaluate()).toMatchObject({ fired: 0, cooling: 1 });

    // One window after the firing, the window holds only events the first firing did not see.
    clock.set(new Date(firstFiring + 15 * MINUTE));
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const second = (await deliveries(id)).at(-1)!;
    expect(second.payload.details).toMatchObject({ observed: { events: 3, liars: 3 } });

    // Nothing new: no firing, however long we wait.
    for (const step of [MINUTE, 15 * MINUTE, 20 * MINUTE]) {
      clock.advance(step);
      expect(await evaluate()).toMatchObject({ fired: 0 });
    }
    expect(await deliveries(id)).toHaveLength(2);
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

  it('retries a delivery the receiver refuses, while ingest goes on answering 200', async () => {
    await addTenant('flaky-site');
    const id = await createRule({ tenant: 'flaky-site', name: 'Flaky', predicate: { kind: 'event_count_above', count: 0, windowMinutes: 5 }, destinations: [hook('/hook/flaky')] });
    await dispatch(); // sends what earlier tests left queued, so the stats below are this test's
    rx.respond = (request, nth) => ({ status: request.path === '/hook/flaky' && nth === 1 ? 500 : 200 });
    clock.advance(2 * MINUTE);
    await ingest('flaky-site', [browser(1)]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });

    expect(await dispatch()).toEqual({ sent: 0, retried: 1, failed: 0 });
    expect((await deliveries(id)).map((d) => [d.status, d.attempts, d.last_status])).toEqual([['pending', 1, 500]]);
    await ingest('flaky-site', [browser(2)]); // asserts 200 inside
    expect(await dispatch()).toEqual({ sent: 0, retried: 0, failed: 0 }); // not due before its backoff
    clock.advance(31_000);
    expect(await dispatch()).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect((await deliveries(id)).map((d) => [d.status, d.attempts, d.last_status])).toEqual([['delivered', 2, 200]]);
    const [first, second] = rx.to('/hook/flaky');
    expect(first!.headers['x-observatory-delivery']).toBe(second!.headers['x-observatory-delivery']);
    expect(verifySignature(second!, HOOK_SECRET) - verifySignature(first!, HOOK_SECRET)).toBe(31);
  });

  it('never blocks ingest on an unreachable destination', async () => {
    await addTenant('down-site');
    const id = await createRule({ tenant: 'down-site', name: 'Down', predicate: { kind: 'event_count_above', count: 0, windowMinutes: 5 }, destinations: [{ kind: 'slack', url: `http://127.0.0.1:${downPort}/x` }] });
    clock.advance(2 * MINUTE);
    await ingest('down-site', [browser(1)]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    expect(await dispatch()).toMatchObject({ retried: 1 });
    await ingest('down-site', [browser(2)]);
    const [row] = await deliveries(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
  });

  it('fires once when two evaluations run at the same time', async () => {
    await addTenant('race-site');
    const id = await createRule({ tenant: 'race-site', name: 'Race', predicate: { kind: 'tarpit_triggered' }, destinations: [hook('/hook/race'), { kind: 'slack', url: `${rx.origin}/slack/race` }] });
    clock.advance(1000);
    await ingest('race-site', [1, 2, 3, 4, 5].map((n) => liar(n, 't13d5555h2_race00000001_000000000001')));
    clock.advance(2 * MINUTE);
    const now = clock.now();
    const runs = await Promise.all([t.app.honeypot.alerts.evaluateAll(now), t.app.honeypot.alerts.evaluateAll(now)]);
    expect(runs.reduce((n, r) => n + r.fired, 0)).toBe(1);
    expect(await deliveries(id)).toHaveLength(2);
  });
});
