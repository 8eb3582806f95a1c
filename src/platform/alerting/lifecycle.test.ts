import { createHmac } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AlertKind, empireAlerts, honeypotAlerts } from '../../../test/helpers/alert-kinds.ts';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { ManualClock } from '../clock.ts';
import { rowsOf } from '../db/client.ts';
import { closedPort, type Receiver, type ReceivedRequest, startReceiver } from '../../../test/helpers/http-receiver.ts';
import { SETTLE_MS } from './plan.ts';

/**
 * The life of an alert rule on the engine (engine.ts), once for each kind of rule: created,
 * listed and audited with its destinations redacted, changed (rename, silence, disable, enable),
 * evaluated once its events have settled, fired to every destination, cooled down for a window,
 * silenced, retried, and fired once under concurrent runs (docs/honeypot/alerts.md,
 * docs/empire/alerts.md). What each kind's predicates read and say is tested beside the kind.
 */

const MINUTE = 60_000;
const clock = new ManualClock('2026-11-23T10:00:00.000Z');
const HOOK_SECRET = 'lifecycle-hook-secret-0123456789';
/** The part of a chat webhook URL that is its credential; it must never be read back. */
const SLACK_PATH = '/slack/services/T0001/B0002/LifecycleSECRETpath';
let t: TestApp;
let rx: Receiver;
let downPort: number;

beforeAll(async () => {
  rx = await startReceiver();
  // Outbound ports are limited to the allow-list: the receiver's random port, and a port where
  // nothing listens (taken now, so the list can hold it).
  downPort = await closedPort();
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port},${downPort}`, OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000' },
  });
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
// Each test sees only its own rules in the job's stats, and only its own deliveries in the dispatch's.
afterEach(async () => {
  await t.app.database.db.execute(sql`UPDATE honeypot_alert_rules SET enabled = false`);
  await t.app.database.db.execute(sql`UPDATE empire_alert_rules SET enabled = false`);
  await t.app.database.db.execute(sql`UPDATE outbound_deliveries SET status = 'failed' WHERE status = 'pending'`);
  rx.respond = () => ({ status: 200 });
});

const dispatch = () => runJob(t, 'outbound-dispatch');

async function deliveries(ruleId: string) {
  return rowsOf<{ id: string; source: string; status: string; attempts: number; last_status: number | null; payload: { title: string; severity: string; details: Record<string, unknown> } }>(
    await t.app.database.db.execute(sql`SELECT id, source, status, attempts, last_status, payload FROM outbound_deliveries WHERE source_id = ${ruleId} ORDER BY created_at, id`),
  );
}

/** Checks `X-Observatory-Signature: t=…,v1=…` over the raw body with the webhook secret; returns t. */
function verifySignature(request: ReceivedRequest, secret: string): number {
  const header = String(request.headers['x-observatory-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  expect(match, header).not.toBeNull();
  expect(match![2]).toBe(createHmac('sha256', secret).update(`${match![1]}.${request.body}`).digest('hex'));
  return Number(match![1]);
}

it('sends a firing in the scheduler tick that raised it: outbound-dispatch runs after every job that enqueues', () => {
  const order = t.app.scheduler.jobs().map((j) => j.name);
  const dispatchAt = order.indexOf('outbound-dispatch');
  for (const enqueuer of ['alert-evaluate', 'empire-alert-evaluate', 'cost-budget-evaluate']) {
    expect(order.indexOf(enqueuer), enqueuer).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(enqueuer), enqueuer).toBeLessThan(dispatchAt);
  }
});

describe.each([honeypotAlerts, empireAlerts])('$kind alert rules', (kind: AlertKind) => {
  const evaluate = () => runJob(t, kind.job);
  const hook = (path: string) => ({ kind: 'webhook', url: `${rx.origin}/${kind.kind}${path}`, secret: HOOK_SECRET });
  const hookPath = (path: string) => `/${kind.kind}${path}`;

  async function createRule(owner: { name: string }, rule: { name: string; predicate: object; destinations: object[]; enabled?: boolean }): Promise<string> {
    const res = await t.call({ method: 'POST', url: kind.createUrl(owner), payload: kind.createBody(owner, rule) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: kind.schemas.create, ok: true });
    return res.json().id;
  }

  async function ruleView(owner: { name: string }, id: string) {
    const res = await t.call({ method: 'GET', url: kind.listUrl(owner) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().rules.find((r: { id: string }) => r.id === id);
  }

  async function auditRows(id: string) {
    return rowsOf<{ verb: string; target: string; before: Record<string, unknown> | null; after: Record<string, unknown> }>(
      await t.app.database.db.execute(sql`SELECT verb, target, before, after FROM operator_audit WHERE target = ${`${kind.audit.target}:${id}`} ORDER BY seq_no`),
    );
  }

  it('creates a rule and lists it with its destinations redacted', async () => {
    const owner = await kind.owner(t, `${kind.kind}-list`);
    const predicate = kind.countAtLeast(500, 15);
    const id = await createRule(owner, { name: 'Flood', predicate, destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/create')] });
    const res = await t.call({ method: 'GET', url: kind.listUrl(owner) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ schema: kind.schemas.list });
    expect(res.body).not.toContain(HOOK_SECRET);
    expect(res.body).not.toContain('LifecycleSECRETpath');
    expect(res.json().rules).toEqual([
      {
        id,
        ...kind.ownerFields(owner),
        name: 'Flood',
        enabled: true,
        predicate,
        destinations: [
          { kind: 'slack', url: `${rx.origin}/…` },
          { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
        ],
        createdAt: clock.now().toISOString(),
        lastFiredAt: null,
        silenceUntil: null,
        evaluatedUntil: null,
      },
    ]);
  });

  it('audits the creation with redacted destinations', async () => {
    const owner = await kind.owner(t, `${kind.kind}-audit`);
    const id = await createRule(owner, { name: 'Audited', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/audited')] });
    const rows = await auditRows(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      verb: kind.audit.create,
      after: { id, ...kind.ownerFields(owner), destinations: [{ kind: 'webhook', url: `${rx.origin}/…`, secretSet: true }] },
    });
    expect(JSON.stringify(rows)).not.toContain(HOOK_SECRET);
  });

  it('refuses destinations that are malformed or that the outbound policy refuses, with 400 and the reason', async () => {
    const owner = await kind.owner(t, `${kind.kind}-bad`);
    const predicate = kind.countAtLeast(5, 15);
    const cases: [object[], string, string][] = [
      [[], 'invalid-body', 'body.destinations'],
      [[{ kind: 'webhook', url: `${rx.origin}/x`, secret: 'short' }], 'invalid-body', 'body.destinations[0].secret'],
      [[{ kind: 'metrics' }], 'invalid-destinations', 'body.destinations'],
      [[{ kind: 'ci_dispatch' }], 'invalid-destinations', 'body.destinations'],
      [[{ kind: 'slack', url: 'http://user:pw@example.com/x' }], 'invalid-destinations', 'body.destinations'],
    ];
    for (const [destinations, reason, field] of cases) {
      const res = await t.call({ method: 'POST', url: kind.createUrl(owner), payload: kind.createBody(owner, { name: 'Bad', predicate, destinations }) });
      expect(res.statusCode, JSON.stringify(destinations)).toBe(400);
      expect(res.json(), JSON.stringify(destinations)).toMatchObject({ schema: 'svc-error.v1', reason, field });
    }
    const metrics = await t.call({ method: 'POST', url: kind.createUrl(owner), payload: kind.createBody(owner, { name: 'Bad', predicate, destinations: [{ kind: 'metrics' }] }) });
    expect(metrics.json().human).toContain('OBSERVATORY_METRICS_FORWARD_URL');
    expect((await t.call({ method: 'GET', url: kind.listUrl(owner) })).json().rules).toEqual([]);
  });

  it('refuses a loopback URL where private outbound is not allowed', async () => {
    const owner = await kind.owner(t, `${kind.kind}-strict`);
    const strict = await t.secondInstance({ OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '0' });
    const res = await strict.server.inject({
      method: 'POST',
      url: kind.createUrl(owner),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: kind.createBody(owner, { name: 'Loopback', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/strict')] }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-destinations', field: 'body.destinations' });
    expect(res.json().human).toMatch(/^A destination cannot be used: destinations\[0\] \(webhook\): /);
  });

  it('answers 401 without a credential and 403 to a token lacking read:alerts or write:alerts', async () => {
    const owner = await kind.owner(t, `${kind.kind}-scope`);
    const body = kind.createBody(owner, { name: 'Scoped', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/scoped')] });
    const list = kind.listUrl(owner);
    const create = kind.createUrl(owner);
    for (const request of [
      { method: 'GET' as const, url: list },
      { method: 'POST' as const, url: create, payload: body },
      { method: 'POST' as const, url: kind.ruleUrl('00000000-0000-4000-8000-000000000000'), payload: { name: 'x' } },
    ]) {
      const res = await t.call({ ...request, token: null });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unauthorized' });
    }
    const reader = await t.tokenWith(['read:alerts']);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await t.call({ method: 'GET', url: list, token: reader })).statusCode).toBe(200);
    const refusedRead = await t.call({ method: 'GET', url: list, token: writer });
    expect(refusedRead.statusCode).toBe(403);
    expect(refusedRead.json()).toMatchObject({ reason: 'forbidden' });
    expect(refusedRead.json().human).toContain('read:alerts');
    const refusedWrite = await t.call({ method: 'POST', url: create, token: reader, payload: body });
    expect(refusedWrite.statusCode).toBe(403);
    expect(refusedWrite.json().human).toContain('write:alerts');
    const created = await t.call({ method: 'POST', url: create, token: writer, payload: body });
    expect(created.statusCode).toBe(200);
    const url = kind.ruleUrl(created.json().id);
    expect((await t.call({ method: 'POST', url, token: reader, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url, token: writer, payload: { name: 'Scoped, renamed' } })).statusCode).toBe(200);
  });

  it('renames, silences and disables a rule, audits each change, skips a no-op, and 404s an unknown id', async () => {
    const owner = await kind.owner(t, `${kind.kind}-change`);
    const id = await createRule(owner, { name: 'Changing', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/change')] });
    const url = kind.ruleUrl(id);
    const silenceUntil = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    const res = await t.call({ method: 'POST', url, payload: { name: 'Changed', silenceUntil, enabled: false } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: kind.schemas.change, rule: { id, ...kind.ownerFields(owner), name: 'Changed', enabled: false, silenceUntil } });
    expect(res.body).not.toContain(HOOK_SECRET);
    expect(await ruleView(owner, id)).toMatchObject({ name: 'Changed', enabled: false, silenceUntil });

    expect((await t.call({ method: 'POST', url, payload: { name: 'Changed', silenceUntil } })).statusCode).toBe(200);
    const cleared = await t.call({ method: 'POST', url, payload: { silenceUntil: null } });
    expect(cleared.json().rule.silenceUntil).toBeNull();
    const audits = await auditRows(id);
    expect(audits.map((a) => a.verb)).toEqual([kind.audit.create, kind.audit.update, kind.audit.update]);
    expect(audits[1]).toMatchObject({ before: { name: 'Changing' }, after: { name: 'Changed', silenceUntil } });
    expect(audits[2]!.after.silenceUntil).toBeNull();

    const enabled = await t.call({ method: 'POST', url, payload: { enabled: true } });
    expect(enabled.json().rule).toMatchObject({ enabled: true, evaluatedUntil: clock.now().toISOString() });

    const bad = await t.call({ method: 'POST', url, payload: { silenceUntil: 'tomorrow' } });
    expect(bad.json()).toMatchObject({ reason: 'invalid-body', field: 'body.silenceUntil' });
    const extra = await t.call({ method: 'POST', url, payload: { predicate: kind.countAtLeast(1, 5) } });
    expect(extra.json()).toMatchObject({ reason: 'invalid-body', field: 'body.predicate' });
    const missing = await t.call({ method: 'POST', url: kind.ruleUrl('3f0e4d2c-1b0a-4987-8654-3210fedcba98'), payload: { enabled: false } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    expect((await t.call({ method: 'POST', url: kind.ruleUrl('not-a-uuid'), payload: { name: 'x' } })).json()).toMatchObject({ reason: 'invalid-params' });
  });

  it('does not evaluate a disabled rule; enabling restarts its evaluation then, and a windowed rule reads its full window', async () => {
    const owner = await kind.owner(t, `${kind.kind}-toggle`);
    const id = await createRule(owner, { name: 'Toggle', enabled: false, predicate: kind.countAtLeast(2, 15), destinations: [hook('/hook/toggle')] });
    await kind.ingest(t, owner, 2, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 });
    const enabled = await t.call({ method: 'POST', url: kind.ruleUrl(id), payload: { enabled: true } });
    expect(enabled.json().rule.evaluatedUntil).toBe(clock.now().toISOString());
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 }); // nothing new has settled since
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 1 });
    expect((await deliveries(id))[0]!.payload.details).toMatchObject({ observed: { events: 2 } });
  });

  it('fires once the events that make the predicate hold have settled, and sends the notification to every destination', async () => {
    const owner = await kind.owner(t, `${kind.kind}-fire`);
    const id = await createRule(owner, {
      name: 'Flood',
      predicate: kind.countAtLeast(3, 10),
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/fire')],
    });
    await kind.ingest(t, owner, 2, clock);
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 }); // inside the settle margin
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual(kind.stats({ evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 }));
    expect(await deliveries(id)).toEqual([]);

    await kind.ingest(t, owner, 1, clock);
    clock.advance(30_000);
    expect(await evaluate()).toMatchObject({ fired: 0 }); // the third event has not settled yet
    clock.advance(MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await evaluate()).toEqual(kind.stats({ evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0 }));
    expect(await ruleView(owner, id)).toMatchObject({ lastFiredAt: firedAt, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    const queued = await deliveries(id);
    expect(queued.map((d) => [d.source, d.status, d.attempts])).toEqual([
      [kind.source, 'pending', 0],
      [kind.source, 'pending', 0],
    ]);
    const { title, details } = kind.countFiring(owner, { id, name: 'Flood' }, 3);
    expect(queued[0]!.payload).toMatchObject({ title, severity: 'warning', details });

    expect(await dispatch()).toEqual({ sent: 2, retried: 0, failed: 0 });
    const slack = JSON.parse(rx.to(SLACK_PATH).at(-1)!.body).text as string;
    expect(slack.startsWith(`*[WARNING] ${title}*\n`), slack).toBe(true);
    expect(slack).toContain(`_${kind.source} ${id} · ${firedAt}_`);
    const webhook = rx.to(hookPath('/hook/fire')).at(-1)!;
    expect(verifySignature(webhook, HOOK_SECRET)).toBe(Math.floor(clock.now().getTime() / 1000));
    expect(queued.map((d) => d.id)).toContain(webhook.headers['x-observatory-delivery']);
    expect(JSON.parse(webhook.body)).toMatchObject({
      schema: 'svc-alert-notification.v1',
      title,
      severity: 'warning',
      source: kind.source,
      sourceId: id,
      firedAt,
      details: { ...details, predicate: kind.countAtLeast(3, 10) },
    });
    expect((await deliveries(id)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('fires at most once per window while the predicate keeps holding, and not again while nothing new arrives', async () => {
    const owner = await kind.owner(t, `${kind.kind}-repeat`);
    const id = await createRule(owner, { name: 'Repeat', predicate: kind.countAtLeast(2, 10), destinations: [hook('/hook/repeat')] });
    await kind.ingest(t, owner, 2, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const firing = clock.now().getTime();

    // Still holding (new events arrive), but within one window of the firing: no second notice.
    await kind.ingest(t, owner, 3, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0, cooling: 1 });
    clock.set(new Date(firing + 10 * MINUTE - 1000));
    expect(await evaluate()).toMatchObject({ fired: 0, cooling: 1 });

    // One window after the firing, the window holds only the events the first firing did not see.
    clock.set(new Date(firing + 10 * MINUTE));
    expect(await evaluate()).toMatchObject({ fired: 1, cooling: 0 });
    expect((await deliveries(id)).at(-1)!.payload.details).toMatchObject({ observed: { events: 3 } });

    // Nothing new: no firing, however long we wait.
    for (const step of [MINUTE, 10 * MINUTE, 20 * MINUTE]) {
      clock.advance(step);
      expect(await evaluate()).toMatchObject({ fired: 0 });
    }
    expect(await deliveries(id)).toHaveLength(2);
  });

  it('sends nothing while silenced, and fires once the silence is over if the window still holds', async () => {
    const owner = await kind.owner(t, `${kind.kind}-silent`);
    const id = await createRule(owner, { name: 'Quiet please', predicate: kind.countAtLeast(1, 30), destinations: [hook('/hook/silent')] });
    const until = new Date(clock.now().getTime() + 5 * MINUTE).toISOString();
    expect((await t.call({ method: 'POST', url: kind.ruleUrl(id), payload: { silenceUntil: until } })).statusCode).toBe(200);
    await kind.ingest(t, owner, 1, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual(kind.stats({ evaluated: 1, fired: 0, silenced: 1, cooling: 0, skipped: 0, failed: 0 }));
    expect(await ruleView(owner, id)).toMatchObject({ lastFiredAt: null, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    expect(await deliveries(id)).toEqual([]);

    clock.set(new Date(until));
    expect(await evaluate()).toMatchObject({ fired: 1, silenced: 0 });
    expect(await deliveries(id)).toHaveLength(1);
  });

  it('retries a delivery the receiver refuses, while ingest goes on answering 200', async () => {
    const owner = await kind.owner(t, `${kind.kind}-flaky`);
    const id = await createRule(owner, { name: 'Flaky', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/flaky')] });
    rx.respond = (request, nth) => ({ status: request.path === hookPath('/hook/flaky') && nth === 1 ? 500 : 200 });
    clock.advance(2 * MINUTE);
    await kind.ingest(t, owner, 1, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });

    expect(await dispatch()).toEqual({ sent: 0, retried: 1, failed: 0 });
    expect((await deliveries(id)).map((d) => [d.status, d.attempts, d.last_status])).toEqual([['pending', 1, 500]]);
    await kind.ingest(t, owner, 1, clock); // asserts 200 inside
    expect(await dispatch()).toEqual({ sent: 0, retried: 0, failed: 0 }); // not due before its backoff
    clock.advance(31_000);
    expect(await dispatch()).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect((await deliveries(id)).map((d) => [d.status, d.attempts, d.last_status])).toEqual([['delivered', 2, 200]]);
    const [first, second] = rx.to(hookPath('/hook/flaky'));
    expect(first!.headers['x-observatory-delivery']).toBe(second!.headers['x-observatory-delivery']);
    expect(verifySignature(second!, HOOK_SECRET) - verifySignature(first!, HOOK_SECRET)).toBe(31);
  });

  it('never blocks ingest on an unreachable destination', async () => {
    const owner = await kind.owner(t, `${kind.kind}-down`);
    const id = await createRule(owner, { name: 'Down', predicate: kind.countAtLeast(1, 5), destinations: [{ kind: 'slack', url: `http://127.0.0.1:${downPort}/x` }] });
    clock.advance(2 * MINUTE);
    await kind.ingest(t, owner, 1, clock);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    expect(await dispatch()).toMatchObject({ retried: 1 });
    await kind.ingest(t, owner, 1, clock);
    const [row] = await deliveries(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
  });

  it('fires once when two evaluations run at the same time', async () => {
    const owner = await kind.owner(t, `${kind.kind}-race`);
    const id = await createRule(owner, { name: 'Race', predicate: kind.countAtLeast(1, 5), destinations: [hook('/hook/race'), { kind: 'slack', url: `${rx.origin}/slack/race` }] });
    await kind.ingest(t, owner, 1, clock);
    clock.advance(2 * MINUTE);
    const now = clock.now();
    const runs = await Promise.all([kind.evaluateAll(t, now), kind.evaluateAll(t, now)]);
    expect(runs.reduce((n, r) => n + r.fired, 0)).toBe(1);
    expect(await deliveries(id)).toHaveLength(2);
  });

  it('schedules its evaluation every minute', () => {
    expect(t.app.scheduler.jobs().find((j) => j.name === kind.job)).toMatchObject({ schedule: '* * * * *' });
  });
});
