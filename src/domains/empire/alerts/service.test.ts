import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runJob as runJobNow, startTestApp, type TestApp, testEnv, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire } from '../../../../test/helpers/empire.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { type Receiver, startReceiver } from '../../../../test/helpers/http-receiver.ts';
import { createEmpireAlertService, type GraphLagProvider } from './service.ts';
import { GRAPH_LAG_RENOTIFY_MINUTES } from './predicates.ts';
import type { EmpireEvent } from '../ingest/service.ts';

const MINUTE = 60_000;
const JOB = 'empire-alert-evaluate';
const clock = new ManualClock('2026-11-24T10:00:00.000Z');

// What empire rules add to the engine's lifecycle (src/platform/alerting/lifecycle.test.ts runs
// that for every kind): rules per toolset and tenant, the predicate union and what each kind reads
// (counts by event type, the cross-toolset join, the knowledge graph's lag), and how a firing is
// worded (docs/empire/alerts.md).
/** The receiver's random port joins the outbound port allow-list once it is listening (beforeAll). */
const ENV: Record<string, string> = { OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000' };
const HOOK_SECRET = 'empire-hook-secret-0123456789';
/** The part of a chat webhook URL that is its credential; it must never be read back. */
const SLACK_PATH = '/slack/services/T0001/B0002/EmpireSECRETpath77';
let t: TestApp;
let rx: Receiver;

const alertsOf = (toolset: string) => `${V1}/empire/${toolset}/alerts`;
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

const runJob = (job: string) => runJobNow(t, job);
const evaluate = () => runJob(JOB);
const dispatch = () => runJob('outbound-dispatch');

async function deliveries(ruleId: string) {
  return rowsOf<{ id: string; source: string; status: string; payload: { title: string; text: string; severity: string; details: Record<string, unknown> } }>(
    await t.app.database.db.execute(sql`SELECT id, source, status, payload FROM outbound_deliveries WHERE source_id = ${ruleId} ORDER BY created_at, id`),
  );
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

describe('creating and listing rules', () => {
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


  it('refuses bad predicates, bodies and toolsets with 400 and the reason', async () => {
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
    for (const toolset of ['ab', '9lives', 'has_underscore']) {
      const res = await t.call({ method: 'POST', url: alertsOf(toolset), payload: { ...base, predicate: count } });
      expect(res.json(), toolset).toMatchObject({ reason: 'invalid-params', field: 'path.toolset' });
      expect((await t.call({ method: 'GET', url: alertsOf(toolset) })).statusCode).toBe(400);
    }
    expect((await t.call({ method: 'GET', url: alertsOf('bad-lab') })).json().rules).toEqual([]);
  });

});

describe('evaluation', () => {
  it('fires empire_count_gte when the count of its event type is reached, not below, naming the type', async () => {
    const id = await createRule('count-lab', {
      name: 'Crawl flood',
      predicate: { kind: 'empire_count_gte', count: 3, windowMinutes: 10, eventType: 'crawl.page' },
      destinations: [{ kind: 'slack', url: `${rx.origin}${SLACK_PATH}` }, hook('/hook/count')],
    });
    // Two pages and other types or toolsets do not count.
    await ingest('count-lab', [...times(2, { eventType: 'crawl.page' }), ...times(3, { eventType: 'crawl.done' })]);
    await ingest('count-other', times(5, { eventType: 'crawl.page' }));
    clock.advance(2 * MINUTE);
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0, unknown: 0 });
    expect(await deliveries(id)).toEqual([]);

    await ingest('count-lab', [{ eventType: 'crawl.page' }]);
    clock.advance(2 * MINUTE);
    const firedAt = clock.now().toISOString();
    expect(await evaluate()).toEqual({ evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0, unknown: 0 });
    expect(await dispatch()).toMatchObject({ sent: 2, failed: 0 });
    const slack = JSON.parse(rx.to(SLACK_PATH).at(-1)!.body).text as string;
    expect(slack).toMatch(/^\*\[WARNING\] Crawl flood: 3 crawl\.page events on count-lab\*\n3 crawl\.page events of count-lab were received in the 10 minutes to /);
    expect(slack).toContain(`_empire-rule ${id} · ${firedAt}_`);
    const webhook = rx.to('/hook/count').at(-1)!;
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

});
