import { createHmac } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runJob as runJobNow, startTestApp, type TestApp, testEnv, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire } from '../../../test/helpers/empire.ts';
import { countOutcome, emptyStats, isSilenced, planEvaluation as planGeneric, SETTLE_MS } from '../../platform/alerting/plan.ts';
import { ManualClock } from '../../platform/clock.ts';
import { loadConfig } from '../../platform/config.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { type Receiver, type ReceivedRequest, startReceiver } from '../../platform/outbound/test-receiver.ts';
import { createEmpireAlertService, describeFiring, type GraphLagProvider, matches, planEvaluation } from './alerts.ts';
import { checkPredicate, type EmpirePredicate, GRAPH_LAG_RENOTIFY_MINUTES, normalizePredicate, parseStoredPredicate } from './alerts.predicates.ts';
import type { EmpireEvent } from './ingest/service.ts';

const MINUTE = 60_000;
const JOB = 'empire-alert-evaluate';
const clock = new ManualClock('2026-11-24T10:00:00.000Z');
/** The receiver's random port joins the outbound port allow-list once it is listening (beforeAll). */
const ENV: Record<string, string> = { OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000' };
const HOOK_SECRET = 'empire-hook-secret-0123456789';
/** The part of a chat webhook URL that is its credential; it must never be read back. */
const SLACK_PATH = '/slack/services/T0001/B0002/EmpireSECRETpath77';
let t: TestApp;
let rx: Receiver;

const alertsOf = (toolset: string) => `${V1}/empire/${toolset}/alerts`;
const ruleUrl = (id: string) => `${V1}/empire/alerts/${id}`;
const hook = (path: string) => ({ kind: 'webhook', url: `${rx.origin}${path}`, secret: HOOK_SECRET });

let sent = 0;
/** Sends unsigned (compatibility-mode) events received at the clock's now; each gets a fresh id. */
async function ingest(toolset: string, events: Omit<EmpireEvent, 'id'>[]): Promise<void> {
  const res = await ingestEmpire(t, toolset, events.map((e) => ({ id: `ev-${++sent}`, ...e })));
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().accepted).toBe(events.length);
}
const times = (n: number, event: Omit<EmpireEvent, 'id'>) => Array.from({ length: n }, () => event);

async function createRule(toolset: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.call({ method: 'POST', url: alertsOf(toolset), payload: body });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ schema: 'svc-empire-alert-create.v1', ok: true, toolset });
  return res.json().id;
}

async function ruleView(toolset: string, id: string) {
  const res = await t.call({ method: 'GET', url: alertsOf(toolset) });
  return res.json().rules.find((r: { id: string }) => r.id === id);
}

const runJob = (job: string) => runJobNow(t, job);
const evaluate = () => runJob(JOB);
const dispatch = () => runJob('outbound-dispatch');

async function deliveries(ruleId: string) {
  return rowsOf<{ id: string; source: string; status: string; payload: { title: string; text: string; severity: string; details: Record<string, unknown> } }>(
    await t.app.database.db.execute(sql`SELECT id, source, status, payload FROM outbound_deliveries WHERE source_id = ${ruleId} ORDER BY created_at, id`),
  );
}

function verifySignature(request: ReceivedRequest, secret: string): void {
  const header = String(request.headers['x-observatory-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  expect(match, header).not.toBeNull();
  expect(match![2]).toBe(createHmac('sha256', secret).update(`${match![1]}.${request.body}`).digest('hex'));
}

/** A second alert service on the app's database with its own knowledge-graph lag. */
function serviceWithLag(graphLag: GraphLagProvider) {
  return createEmpireAlertService({
    db: t.app.database.db,
    clock,
    audit: t.app.audit,
    outbound: t.app.outbound,
    config: loadConfig(testEnv(ENV)),
    log: pino({ level: 'silent' }),
    graphLag,
  });
}

beforeAll(async () => {
  rx = await startReceiver();
  ENV.OBSERVATORY_OUTBOUND_ALLOWED_PORTS = `80,443,${rx.port}`;
  t = await startTestApp({ clock, env: ENV });
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
// Each test sees only its own rules in the job's stats.
afterEach(async () => {
  await t.app.database.db.execute(sql`UPDATE empire_alert_rules SET enabled = false`);
});

describe('predicates and plans (pure)', () => {
  const at = (iso: string) => new Date(iso);
  const rule = { toolset: 'crawler-lab' };
  const count: EmpirePredicate = { kind: 'empire_count_gte', count: 10, windowMinutes: 15 };
  const join: EmpirePredicate = { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 30 };
  const lag: EmpirePredicate = { kind: 'graph_lag_gte', lagSec: 600 };

  it('fills defaults and keeps what was given', () => {
    expect(normalizePredicate(join)).toEqual({ ...join, minTenants: 1 });
    expect(normalizePredicate({ ...join, eventType: 'crawl.page', minTenants: 3 })).toEqual({ ...join, eventType: 'crawl.page', minTenants: 3 });
    expect(normalizePredicate(count)).toEqual(count);
    expect(normalizePredicate({ ...lag, nodeKind: 'Fingerprint' })).toEqual({ ...lag, nodeKind: 'Fingerprint' });
  });

  it('checks allowed values with a sentence naming the field', () => {
    for (const p of [count, join, lag]) expect(checkPredicate(p, rule)).toBeNull();
    const refused: [EmpirePredicate, string][] = [
      [{ ...count, count: 0 }, 'predicate.count'],
      [{ ...count, count: 100_000_001 }, 'predicate.count'],
      [{ ...count, count: 2.5 }, 'predicate.count'],
      [{ ...count, windowMinutes: 4 }, 'predicate.windowMinutes'],
      [{ ...count, windowMinutes: 1441 }, 'predicate.windowMinutes'],
      [{ ...count, eventType: '' }, 'predicate.eventType'],
      [{ ...count, eventType: 'x'.repeat(129) }, 'predicate.eventType'],
      [{ ...join, otherToolset: 'crawler-lab' }, 'predicate.otherToolset'],
      [{ ...join, otherToolset: '9lives' }, 'predicate.otherToolset'],
      [{ ...join, otherToolset: 'ab' }, 'predicate.otherToolset'],
      [{ ...join, windowMinutes: 1441 }, 'predicate.windowMinutes'],
      [{ ...join, otherEventType: '' }, 'predicate.otherEventType'],
      [{ ...join, minTenants: 0 }, 'predicate.minTenants'],
      [{ ...join, minTenants: 10_001 }, 'predicate.minTenants'],
      [{ ...lag, lagSec: 0 }, 'predicate.lagSec'],
      [{ ...lag, lagSec: 604_801 }, 'predicate.lagSec'],
      [{ ...lag, nodeKind: 'page' }, 'predicate.nodeKind'],
    ];
    for (const [p, field] of refused) expect(checkPredicate(p, rule), JSON.stringify(p)).toMatchObject({ field });
    expect(checkPredicate({ ...count, count: 100_000_000 }, rule)).toBeNull();
    expect(checkPredicate({ ...join, minTenants: 10_000 }, rule)).toBeNull();
    expect(checkPredicate({ ...lag, lagSec: 604_800 }, rule)).toBeNull();
    expect(checkPredicate({ ...count, windowMinutes: 4 }, rule)?.human).toBe('predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 4).');
    expect(checkPredicate({ ...join, otherToolset: 'crawler-lab' }, rule)?.human).toContain('another toolset than the rule\'s own (crawler-lab)');
    expect(checkPredicate({ ...lag, lagSec: 0 }, rule)?.human).toBe('predicate.lagSec must be a whole number from 1 to 604800 seconds (got 0).');
  });

  it('reads stored predicates back only when they still fit', () => {
    expect(parseStoredPredicate({ ...join }, rule)).toEqual({ ...join, minTenants: 1 });
    expect(parseStoredPredicate({ ...join }, { toolset: 'probe-kit' })).toBeNull();
    expect(parseStoredPredicate({ kind: 'liar_rate_above', pct: 3, windowMinutes: 5 }, rule)).toBeNull();
    expect(parseStoredPredicate({ ...count, extra: 1 }, rule)).toBeNull();
  });

  it('plans generically: settle margin, sliding window, cooldown of one window, incremental periods', () => {
    const createdAt = at('2026-11-24T10:00:00Z');
    const fresh = { createdAt, evaluatedUntil: null, lastFiredAt: null };
    expect(SETTLE_MS).toBe(MINUTE);
    expect(planGeneric(fresh, 15 * MINUTE, at('2026-11-24T10:00:59Z'))).toEqual({ action: 'skip' });
    expect(planGeneric(fresh, 15 * MINUTE, at('2026-11-24T10:05:00Z'))).toEqual({
      action: 'evaluate',
      period: { from: createdAt, to: at('2026-11-24T10:04:00Z') },
      scope: { from: at('2026-11-24T09:49:00Z'), to: at('2026-11-24T10:04:00Z') },
    });
    const fired = { createdAt, evaluatedUntil: at('2026-11-24T10:04:00Z'), lastFiredAt: at('2026-11-24T10:05:00Z') };
    expect(planGeneric(fired, 15 * MINUTE, at('2026-11-24T10:19:59Z'))).toEqual({
      action: 'cooldown',
      period: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:18:59Z') },
    });
    expect(planGeneric(fired, 15 * MINUTE, at('2026-11-24T10:20:00Z')).action).toBe('evaluate');
    // Without a window: exactly the period since the last evaluation, never cooling.
    expect(planGeneric(fired, null, at('2026-11-24T10:06:00Z'))).toEqual({
      action: 'evaluate',
      period: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:05:00Z') },
      scope: { from: at('2026-11-24T10:04:00Z'), to: at('2026-11-24T10:05:00Z') },
    });
    // Empire kinds: the event kinds cool down for their window, graph_lag_gte for its re-notification interval.
    expect(planEvaluation({ predicate: join, ...fired }, at('2026-11-24T10:34:59Z')).action).toBe('cooldown');
    expect(planEvaluation({ predicate: join, ...fired }, at('2026-11-24T10:35:00Z')).action).toBe('evaluate');
    expect(planEvaluation({ predicate: lag, ...fired }, new Date(fired.lastFiredAt.getTime() + GRAPH_LAG_RENOTIFY_MINUTES * MINUTE - 1)).action).toBe('cooldown');
    expect(planEvaluation({ predicate: lag, ...fired }, new Date(fired.lastFiredAt.getTime() + GRAPH_LAG_RENOTIFY_MINUTES * MINUTE)).action).toBe('evaluate');
  });

  it('matches at the threshold and not below; an unknown lag never matches', () => {
    expect(matches(count, { kind: 'empire_count_gte', events: 10 })).toBe(true);
    expect(matches(count, { kind: 'empire_count_gte', events: 9 })).toBe(false);
    expect(matches({ ...join, minTenants: 2 }, { kind: 'cross_toolset_join', total: 2, tenants: [] })).toBe(true);
    expect(matches({ ...join, minTenants: 2 }, { kind: 'cross_toolset_join', total: 1, tenants: [] })).toBe(false);
    expect(matches(join, { kind: 'cross_toolset_join', total: 0, tenants: [] })).toBe(false);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: 600 })).toBe(true);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: 599 })).toBe(false);
    expect(matches(lag, { kind: 'graph_lag_gte', lagSec: null })).toBe(false);
    expect(matches(count, { kind: 'graph_lag_gte', lagSec: 10_000 })).toBe(false);
    expect(isSilenced(at('2026-11-24T10:00:00Z'), at('2026-11-24T09:59:59Z'))).toBe(true);
    expect(isSilenced(at('2026-11-24T10:00:00Z'), at('2026-11-24T10:00:00Z'))).toBe(false);
    expect(isSilenced(null, at('2026-11-24T10:00:00Z'))).toBe(false);
    const stats = emptyStats();
    for (const outcome of ['not-due', 'skipped', 'cooling', 'quiet', 'silenced', 'fired'] as const) countOutcome(stats, outcome);
    expect(stats).toEqual({ evaluated: 4, fired: 1, silenced: 1, cooling: 1, skipped: 1, failed: 0 });
  });

  it('words a firing with the numbers and lists at most 20 tenants in details', () => {
    const scope = { from: at('2026-11-24T09:30:00Z'), to: at('2026-11-24T10:00:00Z') };
    const tenants = Array.from({ length: 25 }, (_, i) => ({ tenant: `t-${i}`, events: 2, otherEvents: 1 }));
    const message = describeFiring({ id: 'r1', name: 'Both', toolset: 'crawler-lab', tenant: null }, { ...join, minTenants: 1 }, { kind: 'cross_toolset_join', total: 30, tenants }, scope, at('2026-11-24T10:01:00Z'));
    expect(message.title).toBe('Both: 30 tenants in both crawler-lab and probe-kit');
    expect(message.text).toContain('t-0 (2 + 1), t-1 (2 + 1), t-2 (2 + 1), t-3 (2 + 1), t-4 (2 + 1) and 25 more.');
    expect((message.details.observed as { tenants: unknown[] }).tenants).toHaveLength(20);
    const counted = describeFiring({ id: 'r2', name: 'Pages', toolset: 'crawler-lab', tenant: 'docs' }, { ...count, eventType: 'crawl.page' }, { kind: 'empire_count_gte', events: 12 }, scope, at('2026-11-24T10:01:00Z'));
    expect(counted.title).toBe('Pages: 12 crawl.page events on crawler-lab for tenant docs');
  });
});

describe('creating, listing and changing rules', () => {
  it('creates rules, lists them per toolset with destinations redacted, filters by tenant, and lists nothing for an unknown toolset', async () => {
    const id = await createRule('list-lab', {
      name: 'Crawl flood',
      predicate: { kind: 'empire_count_gte', count: 500, windowMinutes: 15, eventType: 'crawl.page' },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/create')],
    });
    const createdAt = clock.now().toISOString();
    clock.advance(1000); // listed oldest first
    const scoped = await createRule('list-lab', {
      name: 'Docs scraped and probed',
      tenant: 'docs-mirror',
      enabled: false,
      predicate: { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 60 },
      destinations: [hook('/hook/create')],
    });
    await createRule('other-lab', { name: 'Elsewhere', predicate: { kind: 'graph_lag_gte', lagSec: 900 }, destinations: [hook('/hook/create')] });

    const all = await t.call({ method: 'GET', url: alertsOf('list-lab') });
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ schema: 'svc-empire-alerts.v1', tenant: null, toolset: 'list-lab' });
    expect(all.json().rules.map((r: { id: string }) => r.id)).toEqual([id, scoped]);
    expect(all.body).not.toContain(HOOK_SECRET);
    expect(all.body).not.toContain('EmpireSECRETpath77');
    expect(all.json().rules[0]).toEqual({
      id,
      name: 'Crawl flood',
      toolset: 'list-lab',
      tenant: null,
      enabled: true,
      predicate: { kind: 'empire_count_gte', count: 500, windowMinutes: 15, eventType: 'crawl.page' },
      destinations: [
        { kind: 'slack', url: `${rx.origin}/…` },
        { kind: 'webhook', url: `${rx.origin}/…`, secretSet: true },
      ],
      createdAt,
      lastFiredAt: null,
      silenceUntil: null,
      evaluatedUntil: null,
    });
    expect(all.json().rules[1]).toMatchObject({
      tenant: 'docs-mirror',
      enabled: false,
      predicate: { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 60, minTenants: 1 },
    });

    const docs = await t.call({ method: 'GET', url: `${alertsOf('list-lab')}?tenant=docs-mirror` });
    expect(docs.json()).toMatchObject({ tenant: 'docs-mirror', toolset: 'list-lab' });
    expect(docs.json().rules.map((r: { id: string }) => r.id)).toEqual([scoped]);

    const unknown = await t.call({ method: 'GET', url: alertsOf('never-sent-anything') });
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json()).toMatchObject({ schema: 'svc-empire-alerts.v1', toolset: 'never-sent-anything', tenant: null, rules: [] });
  });

  it('audits the creation with redacted destinations', async () => {
    const id = await createRule('audit-lab', { name: 'Audited', predicate: { kind: 'graph_lag_gte', lagSec: 60 }, destinations: [hook('/hook/audited')] });
    const rows = rowsOf<{ verb: string; target: string; after: Record<string, unknown> }>(
      await t.app.database.db.execute(sql`SELECT verb, target, after FROM operator_audit WHERE target = ${`empire-alert-rule:${id}`}`),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      verb: 'empire-alert.create',
      after: { id, toolset: 'audit-lab', tenant: null, destinations: [{ kind: 'webhook', url: `${rx.origin}/…`, secretSet: true }] },
    });
    expect(JSON.stringify(rows)).not.toContain(HOOK_SECRET);
  });

  it('refuses bad predicates, destinations and toolsets with 400 and the reason', async () => {
    const base = { name: 'Bad', destinations: [hook('/hook/bad')] };
    const count = { kind: 'empire_count_gte', count: 5, windowMinutes: 15 };
    const join = { kind: 'cross_toolset_join', otherToolset: 'probe-kit', windowMinutes: 15 };
    const lag = { kind: 'graph_lag_gte', lagSec: 60 };
    const cases: [Record<string, unknown>, string, string][] = [
      // Shapes: the request validator.
      [{ ...base, predicate: { kind: 'empire_count_above', count: 5, windowMinutes: 15 } }, 'invalid-body', 'body.predicate.kind'],
      [{ ...base, predicate: { count: 5, windowMinutes: 15 } }, 'invalid-body', 'body.predicate.kind'],
      [{ ...base, predicate: { kind: 'empire_count_gte', windowMinutes: 15 } }, 'invalid-body', 'body.predicate.count'],
      [{ ...base, predicate: { ...count, count: 'five' } }, 'invalid-body', 'body.predicate.count'],
      [{ ...base, predicate: { ...count, minTenants: 2 } }, 'invalid-body', 'body.predicate.minTenants'],
      [{ ...base, predicate: { kind: 'cross_toolset_join', windowMinutes: 15 } }, 'invalid-body', 'body.predicate.otherToolset'],
      [{ ...base, predicate: { ...join, minTenants: 1.5 } }, 'invalid-body', 'body.predicate.minTenants'],
      [{ ...base, predicate: { kind: 'graph_lag_gte' } }, 'invalid-body', 'body.predicate.lagSec'],
      [{ ...base, predicate: { ...lag, windowMinutes: 15 } }, 'invalid-body', 'body.predicate.windowMinutes'],
      [{ ...base, predicate: { ...lag, nodeKind: { name: 'Fingerprint' } } }, 'invalid-body', 'body.predicate.nodeKind'],
      [{ ...base, predicate: count, colour: 'red' }, 'invalid-body', 'body.colour'],
      [{ name: 'Bad', predicate: count }, 'invalid-body', 'body.destinations'],
      [{ destinations: base.destinations, predicate: count }, 'invalid-body', 'body.name'],
      [{ ...base, predicate: count, destinations: [] }, 'invalid-body', 'body.destinations'],
      [{ ...base, predicate: count, destinations: [{ kind: 'webhook', url: `${rx.origin}/x`, secret: 'short' }] }, 'invalid-body', 'body.destinations[0].secret'],
      // Values: the predicate check.
      [{ ...base, predicate: { ...count, count: 0 } }, 'invalid-predicate', 'body.predicate.count'],
      [{ ...base, predicate: { ...count, count: 100_000_001 } }, 'invalid-predicate', 'body.predicate.count'],
      [{ ...base, predicate: { ...count, windowMinutes: 2 } }, 'invalid-predicate', 'body.predicate.windowMinutes'],
      [{ ...base, predicate: { ...count, eventType: '' } }, 'invalid-predicate', 'body.predicate.eventType'],
      [{ ...base, predicate: { ...join, otherToolset: 'bad-lab' } }, 'invalid-predicate', 'body.predicate.otherToolset'],
      [{ ...base, predicate: { ...join, otherToolset: 'x' } }, 'invalid-predicate', 'body.predicate.otherToolset'],
      [{ ...base, predicate: { ...join, windowMinutes: 1441 } }, 'invalid-predicate', 'body.predicate.windowMinutes'],
      [{ ...base, predicate: { ...join, minTenants: 0 } }, 'invalid-predicate', 'body.predicate.minTenants'],
      [{ ...base, predicate: { ...join, otherEventType: 'e'.repeat(129) } }, 'invalid-predicate', 'body.predicate.otherEventType'],
      [{ ...base, predicate: { ...lag, lagSec: 0 } }, 'invalid-predicate', 'body.predicate.lagSec'],
      [{ ...base, predicate: { ...lag, lagSec: 604_801 } }, 'invalid-predicate', 'body.predicate.lagSec'],
      [{ ...base, predicate: { ...lag, nodeKind: '' } }, 'invalid-predicate', 'body.predicate.nodeKind'],
      // Destinations the outbound policy refuses.
      [{ ...base, predicate: count, destinations: [{ kind: 'metrics' }] }, 'invalid-destinations', 'body.destinations'],
      [{ ...base, predicate: count, destinations: [{ kind: 'ci_dispatch' }] }, 'invalid-destinations', 'body.destinations'],
      [{ ...base, predicate: count, destinations: [{ kind: 'slack', url: 'http://user:pw@example.com/x' }] }, 'invalid-destinations', 'body.destinations'],
    ];
    for (const [body, reason, field] of cases) {
      const res = await t.call({ method: 'POST', url: alertsOf('bad-lab'), payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json(), JSON.stringify(body)).toMatchObject({ schema: 'svc-error.v1', reason, field });
    }
    const kind = await t.call({ method: 'POST', url: alertsOf('bad-lab'), payload: cases[0]![0] });
    expect(kind.json().human).toBe('body.predicate.kind must be one of: empire_count_gte, cross_toolset_join, graph_lag_gte.');
    const same = await t.call({ method: 'POST', url: alertsOf('bad-lab'), payload: { ...base, predicate: { ...join, otherToolset: 'bad-lab' } } });
    expect(same.json().human).toContain('another toolset than the rule\'s own (bad-lab)');
    const metrics = await t.call({ method: 'POST', url: alertsOf('bad-lab'), payload: { ...base, predicate: count, destinations: [{ kind: 'metrics' }] } });
    expect(metrics.json().human).toContain('OBSERVATORY_METRICS_FORWARD_URL');
    for (const toolset of ['ab', '9lives', 'has_underscore']) {
      const res = await t.call({ method: 'POST', url: alertsOf(toolset), payload: { ...base, predicate: count } });
      expect(res.json(), toolset).toMatchObject({ reason: 'invalid-params', field: 'path.toolset' });
      expect((await t.call({ method: 'GET', url: alertsOf(toolset) })).statusCode).toBe(400);
    }
    expect((await t.call({ method: 'GET', url: alertsOf('bad-lab') })).json().rules).toEqual([]);
  });

  it('answers 401 without a credential and 403 to a token lacking read:alerts or write:alerts', async () => {
    const body = { name: 'Scoped', predicate: { kind: 'graph_lag_gte', lagSec: 60 }, destinations: [hook('/hook/scoped')] };
    const list = alertsOf('scope-lab');
    for (const request of [{ method: 'GET' as const, url: list }, { method: 'POST' as const, url: list, payload: body }, { method: 'POST' as const, url: ruleUrl('00000000-0000-4000-8000-000000000000'), payload: { name: 'x' } }]) {
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
    const refusedWrite = await t.call({ method: 'POST', url: list, token: reader, payload: body });
    expect(refusedWrite.statusCode).toBe(403);
    expect(refusedWrite.json().human).toContain('write:alerts');
    const created = await t.call({ method: 'POST', url: list, token: writer, payload: body });
    expect(created.statusCode).toBe(200);
    const url = ruleUrl(created.json().id);
    expect((await t.call({ method: 'POST', url, token: reader, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url, token: writer, payload: { name: 'Scoped, renamed' } })).statusCode).toBe(200);
  });

  it('renames, silences and disables a rule, audits each change, skips a no-op, and 404s an unknown id', async () => {
    const id = await createRule('change-lab', { name: 'Changing', predicate: { kind: 'graph_lag_gte', lagSec: 60 }, destinations: [hook('/hook/change')] });
    const silenceUntil = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    const res = await t.call({ method: 'POST', url: ruleUrl(id), payload: { name: 'Changed', silenceUntil, enabled: false } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-empire-alert.v1', rule: { id, toolset: 'change-lab', name: 'Changed', enabled: false, silenceUntil } });
    expect(res.body).not.toContain(HOOK_SECRET);
    expect(await ruleView('change-lab', id)).toMatchObject({ name: 'Changed', enabled: false, silenceUntil });

    expect((await t.call({ method: 'POST', url: ruleUrl(id), payload: { name: 'Changed', silenceUntil } })).statusCode).toBe(200);
    const cleared = await t.call({ method: 'POST', url: ruleUrl(id), payload: { silenceUntil: null } });
    expect(cleared.json().rule.silenceUntil).toBeNull();
    const audits = rowsOf<{ verb: string; before: { name: string }; after: { name: string; silenceUntil: string | null } }>(
      await t.app.database.db.execute(sql`SELECT verb, before, after FROM operator_audit WHERE target = ${`empire-alert-rule:${id}`} ORDER BY seq_no`),
    );
    expect(audits.map((a) => a.verb)).toEqual(['empire-alert.create', 'empire-alert.update', 'empire-alert.update']);
    expect(audits[1]).toMatchObject({ before: { name: 'Changing' }, after: { name: 'Changed', silenceUntil } });
    expect(audits[2]!.after.silenceUntil).toBeNull();

    const enabled = await t.call({ method: 'POST', url: ruleUrl(id), payload: { enabled: true } });
    expect(enabled.json().rule).toMatchObject({ enabled: true, evaluatedUntil: clock.now().toISOString() });

    const bad = await t.call({ method: 'POST', url: ruleUrl(id), payload: { silenceUntil: 'tomorrow' } });
    expect(bad.json()).toMatchObject({ reason: 'invalid-body', field: 'body.silenceUntil' });
    const extra = await t.call({ method: 'POST', url: ruleUrl(id), payload: { predicate: { kind: 'graph_lag_gte', lagSec: 5 } } });
    expect(extra.json()).toMatchObject({ reason: 'invalid-body', field: 'body.predicate' });
    const missing = await t.call({ method: 'POST', url: ruleUrl('00000000-0000-4000-8000-000000000000'), payload: { name: 'x' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    expect((await t.call({ method: 'POST', url: ruleUrl('not-a-uuid'), payload: { name: 'x' } })).json()).toMatchObject({ reason: 'invalid-params' });
  });
});

describe('evaluation and fan-out', () => {
  it('fires empire_count_gte when the count is reached, not below, and sends the notification to the destinations', async () => {
    const id = await createRule('count-lab', {
      name: 'Crawl flood',
      predicate: { kind: 'empire_count_gte', count: 3, windowMinutes: 10, eventType: 'crawl.page' },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/count')],
    });
    // Two pages and other types or toolsets do not count.
    await ingest('count-lab', [...times(2, { eventType: 'crawl.page' }), ...times(3, { eventType: 'crawl.done' })]);
    await ingest('count-other', times(5, { eventType: 'crawl.page' }));
    expect(await evaluate()).toMatchObject({ evaluated: 0, fired: 0 }); // inside the settle margin
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0, unknown: 0 });
    expect(await deliveries(id)).toEqual([]);

    await ingest('count-lab', [{ eventType: 'crawl.page' }]);
    clock.advance(30_000);
    expect(await evaluate()).toMatchObject({ fired: 0 }); // the third page has not settled yet
    clock.advance(MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0, unknown: 0 });
    expect(await ruleView('count-lab', id)).toMatchObject({ lastFiredAt: firedAt, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    const queued = await deliveries(id);
    expect(queued.map((d) => [d.source, d.status])).toEqual([
      ['empire-rule', 'pending'],
      ['empire-rule', 'pending'],
    ]);
    expect(queued[0]!.payload).toMatchObject({ title: 'Crawl flood: 3 crawl.page events on count-lab', severity: 'warning' });

    const before = rx.requests.length;
    expect(await dispatch()).toMatchObject({ sent: 2, failed: 0 });
    expect(rx.requests.length - before).toBe(2);
    const slack = JSON.parse(rx.to(SLACK_PATH).at(-1)!.body).text as string;
    expect(slack).toMatch(/^\*\[WARNING\] Crawl flood: 3 crawl\.page events on count-lab\*\n3 crawl\.page events of count-lab were received in the 10 minutes to /);
    expect(slack).toContain(`_empire-rule ${id} · ${firedAt}_`);
    const webhook = rx.to('/hook/count').at(-1)!;
    verifySignature(webhook, HOOK_SECRET);
    expect(JSON.parse(webhook.body)).toMatchObject({
      schema: 'svc-alert-notification.v1',
      source: 'empire-rule',
      sourceId: id,
      firedAt,
      severity: 'warning',
      details: {
        toolset: 'count-lab',
        tenant: null,
        rule: { id, name: 'Crawl flood' },
        predicate: { kind: 'empire_count_gte', count: 3, windowMinutes: 10, eventType: 'crawl.page' },
        observed: { events: 3 },
      },
    });
    expect((await deliveries(id)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
  });

  it('counts only the rule\'s tenant when it has one', async () => {
    const id = await createRule('tenant-lab', { name: 'Docs only', tenant: 'docs', predicate: { kind: 'empire_count_gte', count: 2, windowMinutes: 5 }, destinations: [hook('/hook/tenant')] });
    await ingest('tenant-lab', [{ eventType: 'a', tenant: 'docs' }, { eventType: 'a', tenant: 'blog' }, { eventType: 'a' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0 });
    await ingest('tenant-lab', [{ eventType: 'b', tenant: 'docs' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    expect((await deliveries(id))[0]!.payload).toMatchObject({ title: 'Docs only: 2 events on tenant-lab for tenant docs', details: { tenant: 'docs', observed: { events: 2 } } });
  });

  it('cools down for one window after a firing, then fires again only on new events', async () => {
    const id = await createRule('cool-lab', { name: 'Repeat', predicate: { kind: 'empire_count_gte', count: 2, windowMinutes: 10 }, destinations: [hook('/hook/cool')] });
    await ingest('cool-lab', times(2, { eventType: 'x' }));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const firing = clock.now().getTime();

    await ingest('cool-lab', times(3, { eventType: 'x' }));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0, cooling: 1 });
    clock.set(new Date(firing + 10 * MINUTE - 1000));
    expect(await evaluate()).toMatchObject({ fired: 0, cooling: 1 });

    // One window after the firing, the window holds only the three events the first firing did not see.
    clock.set(new Date(firing + 10 * MINUTE));
    expect(await evaluate()).toMatchObject({ fired: 1, cooling: 0 });
    expect((await deliveries(id)).at(-1)!.payload.details).toMatchObject({ observed: { events: 3 } });

    for (const step of [MINUTE, 10 * MINUTE, 20 * MINUTE]) {
      clock.advance(step);
      expect(await evaluate()).toMatchObject({ fired: 0 });
    }
    expect(await deliveries(id)).toHaveLength(2);
  });

  it('sends nothing while silenced, and fires once the silence is over if the window still matches', async () => {
    const id = await createRule('silent-lab', { name: 'Quiet please', predicate: { kind: 'empire_count_gte', count: 1, windowMinutes: 30 }, destinations: [hook('/hook/silent')] });
    const until = new Date(clock.now().getTime() + 5 * MINUTE).toISOString();
    expect((await t.call({ method: 'POST', url: ruleUrl(id), payload: { silenceUntil: until } })).statusCode).toBe(200);
    await ingest('silent-lab', [{ eventType: 'x' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 0, silenced: 1, cooling: 0, skipped: 0, failed: 0, unknown: 0 });
    expect(await ruleView('silent-lab', id)).toMatchObject({ lastFiredAt: null, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS).toISOString() });
    expect(await deliveries(id)).toEqual([]);

    clock.set(until);
    expect(await evaluate()).toMatchObject({ fired: 1, silenced: 0 });
    expect(await deliveries(id)).toHaveLength(1);
  });

  it('fires cross_toolset_join only when the same tenant has events in both toolsets', async () => {
    const id = await createRule('join-lab', {
      name: 'Scraped and probed',
      predicate: { kind: 'cross_toolset_join', otherToolset: 'join-probe', windowMinutes: 15, eventType: 'crawl.page' },
      destinations: [hook('/hook/join')],
    });
    // Different tenants on each side, a null tenant on both, the right tenant but the wrong type: no join.
    await ingest('join-lab', [{ eventType: 'crawl.page', tenant: 'alpha' }, { eventType: 'crawl.page' }, { eventType: 'crawl.done', tenant: 'gamma' }]);
    await ingest('join-probe', [{ eventType: 'probe', tenant: 'beta' }, { eventType: 'probe' }, { eventType: 'probe', tenant: 'gamma' }]);
    await ingest('join-elsewhere', [{ eventType: 'crawl.page', tenant: 'beta' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 1, fired: 0 });

    // Beta now appears in the rule's toolset too.
    await ingest('join-lab', [{ eventType: 'crawl.page', tenant: 'beta' }, { eventType: 'crawl.page', tenant: 'beta' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ fired: 1 });
    const [delivery] = await deliveries(id);
    expect(delivery!.payload).toMatchObject({
      title: 'Scraped and probed: 1 tenant in both join-lab and join-probe',
      details: { observed: { total: 1, tenants: [{ tenant: 'beta', events: 2, otherEvents: 1 }] } },
    });
    expect(delivery!.payload.text).toContain('beta (2 + 1)');
  });

  it('joins only the rule\'s tenant when it has one, and needs minTenants tenants', async () => {
    const scoped = await createRule('join2-lab', { name: 'Gamma', tenant: 'gamma', predicate: { kind: 'cross_toolset_join', otherToolset: 'join2-probe', windowMinutes: 15 }, destinations: [hook('/hook/join2')] });
    const two = await createRule('join2-lab', { name: 'Two', predicate: { kind: 'cross_toolset_join', otherToolset: 'join2-probe', windowMinutes: 15, minTenants: 2 }, destinations: [hook('/hook/join2')] });
    await ingest('join2-lab', [{ eventType: 'a', tenant: 'alpha' }]);
    await ingest('join2-probe', [{ eventType: 'b', tenant: 'alpha' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 2, fired: 0 });
    await ingest('join2-lab', [{ eventType: 'a', tenant: 'gamma' }]);
    await ingest('join2-probe', [{ eventType: 'b', tenant: 'gamma' }]);
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toMatchObject({ evaluated: 2, fired: 2 });
    expect((await deliveries(scoped))[0]!.payload.details).toMatchObject({ tenant: 'gamma', observed: { total: 1, tenants: [{ tenant: 'gamma' }] } });
    expect((await deliveries(two))[0]!.payload.details).toMatchObject({ observed: { total: 2 } });
  });

  it('graph_lag_gte does not fire while the graph was never materialised (lag unknown), and fires with an injected lag', async () => {
    const id = await createRule('graph-lab', { name: 'Graph behind', predicate: { kind: 'graph_lag_gte', lagSec: 600, nodeKind: 'Fingerprint' }, destinations: [hook('/hook/graph')] });
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0, unknown: 1 });
    expect(await deliveries(id)).toEqual([]);

    const asked: (string | undefined)[] = [];
    let lag = 599;
    const injected = serviceWithLag(async (nodeKind) => {
      asked.push(nodeKind);
      return lag;
    });
    clock.advance(MINUTE);
    expect(await injected.evaluateAll(clock.now())).toMatchObject({ evaluated: 1, fired: 0, unknown: 0 });
    lag = 900;
    clock.advance(MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await injected.evaluateAll(clock.now())).toMatchObject({ evaluated: 1, fired: 1 });
    expect(asked).toEqual(['Fingerprint', 'Fingerprint']);
    const [delivery] = await deliveries(id);
    expect(delivery!.payload).toMatchObject({
      title: 'Graph behind: knowledge graph 900 s behind for Fingerprint nodes',
      details: { toolset: 'graph-lab', observed: { lagSec: 900, at: firedAt } },
    });
    // The lag persists: no second notice within the re-notification interval, one after it.
    clock.advance(30 * MINUTE);
    expect(await injected.evaluateAll(clock.now())).toMatchObject({ fired: 0, cooling: 1 });
    clock.set(new Date(Date.parse(firedAt) + GRAPH_LAG_RENOTIFY_MINUTES * MINUTE));
    expect(await injected.evaluateAll(clock.now())).toMatchObject({ fired: 1 });
    expect(await dispatch()).toMatchObject({ failed: 0 });
    expect(JSON.parse(rx.to('/hook/graph').at(-1)!.body)).toMatchObject({ source: 'empire-rule', sourceId: id, details: { observed: { lagSec: 900 } } });
  });

  it('fires once when two evaluations run at the same time', async () => {
    const id = await createRule('race-lab', { name: 'Race', predicate: { kind: 'empire_count_gte', count: 1, windowMinutes: 5 }, destinations: [hook('/hook/race'), hook('/hook/race2')] });
    await ingest('race-lab', [{ eventType: 'x' }]);
    clock.advance(2 * MINUTE);
    const now = clock.now();
    const runs = await Promise.all([t.app.empire.alerts.evaluateAll(now), t.app.empire.alerts.evaluateAll(now)]);
    expect(runs.reduce((n, r) => n + r.fired, 0)).toBe(1);
    expect(await deliveries(id)).toHaveLength(2);
  });

  it('schedules the evaluation every minute', () => {
    expect(t.app.empire.jobs().find((j) => j.name === JOB)).toMatchObject({ schedule: '* * * * *' });
  });
});
