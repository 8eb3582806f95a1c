import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { loadConfig } from '../../../platform/config.ts';
import { type Database, type Db, rowsOf } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import type { Principal, Scope } from '../../../platform/http/registry.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { Destination } from '../../../platform/outbound/destinations.ts';
import { createOutbound } from '../../../platform/outbound/service.ts';
import {
  type AlertAction,
  createCostBudgetService,
  crossedThresholds,
  defaultDestinations,
  monthDays,
  monthsToEvaluate,
  type SetBudgetInput,
  type Spend,
  transition,
} from './service.ts';

// Cost budgets and alerts (docs/cost/alerts.md): the figures, the evaluator (idempotent, one alert
// per budget, month and threshold even when two run at once), the state table, audit facts,
// notifications and the reach of toolset-bound tokens.

const T0 = new Date('2026-11-20T10:00:00.000Z');
const WEBHOOK: Destination = { kind: 'webhook', url: 'https://alerts.example.com/cost', secret: 'cost-secret-0123456789' };

describe('months (pure)', () => {
  it('gives the days of a month, December rolling into January', () => {
    expect(monthDays('2026-11')).toEqual({ from: '2026-11-01', to: '2026-12-01' });
    expect(monthDays('2026-12')).toEqual({ from: '2026-12-01', to: '2027-01-01' });
    expect(monthDays('2028-02')).toEqual({ from: '2028-02-01', to: '2028-03-01' });
  });

  it('evaluates the previous month during the first three days of a month, for budgets older than the month', () => {
    const old = new Date('2026-10-15T00:00:00.000Z');
    expect(monthsToEvaluate(new Date('2026-11-20T10:00:00.000Z'), old)).toEqual(['2026-11']);
    expect(monthsToEvaluate(new Date('2026-12-01T00:00:00.000Z'), old)).toEqual(['2026-11', '2026-12']);
    expect(monthsToEvaluate(new Date('2026-12-03T23:59:59.999Z'), old)).toEqual(['2026-11', '2026-12']);
    expect(monthsToEvaluate(new Date('2026-12-04T00:00:00.000Z'), old)).toEqual(['2026-12']);
    expect(monthsToEvaluate(new Date('2027-01-02T00:00:00.000Z'), old)).toEqual(['2026-12', '2027-01']);
    // A budget set on 2 December does not judge November.
    expect(monthsToEvaluate(new Date('2026-12-02T12:00:00.000Z'), new Date('2026-12-02T09:00:00.000Z'))).toEqual(['2026-12']);
    expect(monthsToEvaluate(new Date('2026-12-02T12:00:00.000Z'), new Date('2026-12-01T00:00:00.000Z'))).toEqual(['2026-12']);
  });
});

describe('crossedThresholds (pure)', () => {
  it('lists the thresholds reached, ascending, in exact integers', () => {
    expect(crossedThresholds([100, 50, 80], 800_000n, 1_000_000n)).toEqual([50, 80]);
    expect(crossedThresholds([80], 799_999n, 1_000_000n)).toEqual([]);
    expect(crossedThresholds([1, 1000], 10_000_000n, 1_000_000n)).toEqual([1, 1000]);
    expect(crossedThresholds([50], 0n, 1_000_000n)).toEqual([]);
  });
});

describe('transition (pure): spec A\'s state table', () => {
  const at = new Date('2026-11-21T08:00:00.000Z');
  const earlier = new Date('2026-11-20T08:00:00.000Z');
  const open = { status: 'open', ackedAt: null, ackedBy: null, resolvedAt: null };
  const acked = { status: 'acknowledged', ackedAt: earlier, ackedBy: 'alice', resolvedAt: null };
  const resolved = { status: 'resolved', ackedAt: earlier, ackedBy: 'alice', resolvedAt: earlier };

  it('acknowledges an open alert, stamping ackedAt and ackedBy', () => {
    expect(transition(open, 'ack', at, 'bob')).toEqual({ status: 'acknowledged', ackedAt: at, ackedBy: 'bob', resolvedAt: null });
  });
  it('refreshes the stamps of an acknowledged alert on a second ack, the status unchanged', () => {
    expect(transition(acked, 'ack', at, 'bob')).toEqual({ status: 'acknowledged', ackedAt: at, ackedBy: 'bob', resolvedAt: null });
  });
  it('resolves an open alert, stamping resolvedAt and ackedAt (and ackedBy) at once', () => {
    expect(transition(open, 'resolve', at, 'bob')).toEqual({ status: 'resolved', ackedAt: at, ackedBy: 'bob', resolvedAt: at });
  });
  it('resolves an acknowledged alert, keeping its acknowledgement', () => {
    expect(transition(acked, 'resolve', at, 'bob')).toEqual({ status: 'resolved', ackedAt: earlier, ackedBy: 'alice', resolvedAt: at });
  });
  it('forbids every move from resolved', () => {
    expect(transition(resolved, 'ack', at, 'bob')).toBeNull();
    expect(transition(resolved, 'resolve', at, 'bob')).toBeNull();
  });
});

describe('defaultDestinations (pure)', () => {
  it('takes the configured chat webhook and metrics forwarder that the outbound policy allows, never CI dispatch', () => {
    expect(defaultDestinations(loadConfig({}))).toEqual([]);
    const all = loadConfig({
      OBSERVATORY_CHAT_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/x',
      OBSERVATORY_METRICS_FORWARD_URL: 'https://metrics.example.com/ingest',
      OBSERVATORY_CI_DISPATCH_URL: 'https://api.github.com/repos/o/r/dispatches',
      OBSERVATORY_CI_DISPATCH_TOKEN: 'ghp_example',
    });
    expect(defaultDestinations(all)).toEqual([{ kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' }, { kind: 'metrics' }]);
    // A chat URL on a port the policy refuses would fail every delivery: left out.
    expect(defaultDestinations(loadConfig({ OBSERVATORY_CHAT_WEBHOOK_URL: 'https://hooks.example.com:8443/x' }))).toEqual([]);
  });
});

// ——— against a database ———

let testDb: TestDatabase;
let database: Database;
/** A second connection pool on the same database (PostgreSQL), as a second instance; the same one on PGlite. */
let second: Database;
const clock = new ManualClock(T0);
const log = createLogger('silent');

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  second = await testDb.open();
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});

/** The spend dependency the cost records will provide: a plain sum over cost_records. */
function spendOver(db: Db): Spend {
  return async (filter, from, to) => {
    const [row] = rowsOf<{ total: string }>(
      await db.execute(sql`
        SELECT coalesce(sum(amount_micro_usd), 0)::text AS total FROM cost_records
         WHERE day >= ${from}::date AND day < ${to}::date
           ${filter.toolset === undefined ? sql`` : sql`AND toolset = ${filter.toolset}`}
           ${filter.workspace === undefined ? sql`` : sql`AND workspace = ${filter.workspace}`}`),
    );
    return BigInt(row!.total);
  };
}

function serviceOn(db: Db, env: Record<string, string> = {}) {
  const config = loadConfig(env);
  const outbound = createOutbound({ db, clock, config, log });
  return createCostBudgetService({ db, clock, audit: createAuditLog({ clock }), outbound, config, spend: spendOver(db) });
}

const principal = (username: string, toolsets: string[] | null = null, scopes: Scope[] = ['write:alerts', 'read:empire']): Principal => ({
  userId: `user-${username}`,
  username,
  scopes: new Set(scopes),
  toolsets: toolsets === null ? null : new Set(toolsets),
  via: 'bearer',
  tokenId: null,
  sessionId: null,
});
const admin = principal('admin');
const ctx = (p: Principal = admin) => ({ principal: p, requestId: 'req-1' });

let seq = 0;
/** One cost record of `usd` micro-dollars on `day`. */
async function record(day: string, micro: bigint, dims: { toolset?: string; workspace?: string } = {}) {
  seq++;
  await database.db.execute(sql`
    INSERT INTO cost_records (day, toolset, vendor, sku, workspace, region, amount_micro_usd, units_micro, updated_at)
    VALUES (${day}::date, ${dims.toolset ?? 'crawler-lab'}, 'aws', ${`sku-${seq}`}, ${dims.workspace ?? ''}, '', ${micro.toString()}::bigint, 0, now())`);
}

async function reset() {
  for (const table of ['cost_records', 'cost_budgets', 'cost_alerts', 'outbound_deliveries']) await database.db.execute(sql.raw(`DELETE FROM ${table}`));
  clock.set(T0);
}

async function facts(kind?: string) {
  return rowsOf<{ source: string; source_id: string; kind: string; actor: string | null; payload: Record<string, unknown> }>(
    await database.db.execute(sql`
      SELECT source, source_id, kind, actor, payload FROM audit_facts
       WHERE source = 'CostAlert' ${kind === undefined ? sql`` : sql`AND kind = ${kind}`} ORDER BY seq_no`),
  );
}

async function budgetAudits() {
  return rowsOf<{ verb: string; target: string; actor: string; before: unknown; after: Record<string, unknown> | null }>(
    await database.db.execute(sql`SELECT verb, target, actor, before, after FROM operator_audit WHERE verb = 'cost.budget-set' ORDER BY seq_no`),
  );
}

async function deliveries() {
  return rowsOf<{ source: string; source_id: string; destination: Destination; payload: Record<string, unknown>; status: string }>(
    await database.db.execute(sql`SELECT source, source_id, destination, payload, status FROM outbound_deliveries WHERE source = 'cost-alert' ORDER BY created_at, id`),
  );
}

async function alertCount() {
  return rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM cost_alerts`))[0]!.n;
}

async function refusal(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

const toolsetBudget = (over: Partial<SetBudgetInput> = {}): SetBudgetInput => ({
  scope: 'toolset',
  scopeKey: 'crawler-lab',
  monthlyUsd: 1500,
  alertAtPct: [100, 50, 80],
  destinations: [WEBHOOK],
  ...over,
});

describe('setting a budget', () => {
  beforeEach(reset);

  it('creates the budget, thresholds ascending, with the month\'s figures, and audits it', async () => {
    const service = serviceOn(database.db);
    await record('2026-11-03', 1_000_000_000n);
    await record('2026-11-19', 218_750_000n);
    await record('2026-10-31', 999_000_000n); // another month
    await record('2026-12-01', 999_000_000n);
    await record('2026-11-10', 999_000_000n, { toolset: 'probe-kit' }); // another toolset
    const before = (await budgetAudits()).length;
    const { ok, budget } = await service.set(ctx(), toolsetBudget());
    expect(ok).toBe(true);
    expect(budget).toMatchObject({
      scope: 'toolset',
      scopeKey: 'crawler-lab',
      monthlyUsd: 1500,
      alertAtPct: [50, 80, 100],
      monthBucket: '2026-11',
      observedUsd: 1218.75,
      observedPct: 81.25,
      crossedThresholds: [50, 80],
      destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/…', secretSet: true }],
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    const audits = await budgetAudits();
    expect(audits).toHaveLength(before + 1);
    expect(audits.at(-1)).toMatchObject({
      verb: 'cost.budget-set',
      target: 'cost-budget:toolset:crawler-lab',
      actor: 'admin',
      before: null,
      after: { id: budget.id, scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 1500, alertAtPct: [50, 80, 100], destinations: [{ kind: 'webhook', secretSet: true }] },
    });
    expect(JSON.stringify(audits.at(-1))).not.toContain(WEBHOOK.kind === 'webhook' ? WEBHOOK.secret : '');
  });

  it('upserts by (scope, scopeKey): the same id, before and after audited; a call that changes nothing writes nothing', async () => {
    const service = serviceOn(database.db);
    const first = (await service.set(ctx(), toolsetBudget())).budget;
    clock.advance(60_000);
    const second = (await service.set(ctx(), toolsetBudget({ monthlyUsd: 2000.5, alertAtPct: [90], destinations: undefined }))).budget;
    expect(second).toMatchObject({ id: first.id, monthlyUsd: 2000.5, alertAtPct: [90], createdAt: T0.toISOString(), updatedAt: clock.now().toISOString() });
    // Destinations left out keep the budget's own.
    expect(second.destinations).toEqual(first.destinations);
    const audits = await budgetAudits();
    expect(audits.at(-1)).toMatchObject({ before: { monthlyUsd: 1500, alertAtPct: [50, 80, 100] }, after: { monthlyUsd: 2000.5, alertAtPct: [90] } });
    const count = audits.length;
    clock.advance(60_000);
    const same = (await service.set(ctx(), toolsetBudget({ monthlyUsd: 2000.5, alertAtPct: [90], destinations: undefined }))).budget;
    expect(same.updatedAt).toBe(second.updatedAt);
    expect(await budgetAudits()).toHaveLength(count);
    // The same destinations sent again, in the client's key order (jsonb stores its own): no change either.
    const explicit = (await service.set(ctx(), toolsetBudget({ monthlyUsd: 2000.5, alertAtPct: [90] }))).budget;
    const audited = (await budgetAudits()).length;
    clock.advance(60_000);
    const again = (await service.set(ctx(), toolsetBudget({ monthlyUsd: 2000.5, alertAtPct: [90] }))).budget;
    expect(again.updatedAt).toBe(explicit.updatedAt);
    expect(await budgetAudits()).toHaveLength(audited);
    // [] notifies nobody.
    expect((await service.set(ctx(), toolsetBudget({ monthlyUsd: 2000.5, alertAtPct: [90], destinations: [] }))).budget.destinations).toEqual([]);
    const rows = rowsOf<{ n: number }>(await database.db.execute(sql`SELECT count(*)::int AS n FROM cost_budgets`));
    expect(rows[0]!.n).toBe(1);
  });

  it('gives a new budget set without destinations the deployment\'s configured integrations', async () => {
    const service = serviceOn(database.db, { OBSERVATORY_CHAT_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/secretpath' });
    const { budget } = await service.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 20000, alertAtPct: [100] });
    expect(budget.destinations).toEqual([{ kind: 'slack', url: 'https://hooks.slack.com/…' }]);
    expect(budget).toMatchObject({ scope: 'empire', scopeKey: '*', observedUsd: 0, observedPct: 0, crossedThresholds: [] });
  });

  it('sums every record for the empire and a workspace\'s records for a workspace', async () => {
    const service = serviceOn(database.db);
    await record('2026-11-02', 300_000_000n, { toolset: 'a-kit', workspace: 'ws-1' });
    await record('2026-11-03', 100_000_000n, { toolset: 'b-kit', workspace: 'ws-1' });
    await record('2026-11-04', 600_000_000n, { toolset: 'b-kit', workspace: 'ws-2' });
    const empire = (await service.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 3000, alertAtPct: [33, 34] })).budget;
    expect(empire).toMatchObject({ observedUsd: 1000, observedPct: 33.33, crossedThresholds: [33] });
    const ws = (await service.set(ctx(), { scope: 'workspace', scopeKey: 'ws-1', monthlyUsd: 0.5, alertAtPct: [1000] })).budget;
    expect(ws).toMatchObject({ observedUsd: 400, observedPct: 80000, crossedThresholds: [1000] });
    expect((await service.list(admin)).budgets.map((b) => `${b.scope}:${b.scopeKey}`)).toEqual(['empire:*', 'workspace:ws-1']);
  });

  it('shows observedPct cut to two decimals and crosses a threshold only when reached exactly', async () => {
    const service = serviceOn(database.db);
    await record('2026-11-05', 799_999n);
    const { budget } = await service.set(ctx(), toolsetBudget({ monthlyUsd: 1, alertAtPct: [80] }));
    expect(budget).toMatchObject({ observedUsd: 0.799999, observedPct: 79.99, crossedThresholds: [] });
    await record('2026-11-06', 1n);
    expect((await service.list(admin)).budgets[0]).toMatchObject({ observedUsd: 0.8, observedPct: 80, crossedThresholds: [80] });
  });

  it('refuses a scope key that does not fit the scope, an inexact amount and unusable destinations', async () => {
    const service = serviceOn(database.db);
    expect(await refusal(service.set(ctx(), { scope: 'empire', scopeKey: 'all', monthlyUsd: 1, alertAtPct: [50] }))).toMatchObject({ status: 400, reason: 'invalid-scope-key' });
    expect(await refusal(service.set(ctx(), toolsetBudget({ scopeKey: 'x' })))).toMatchObject({ status: 400, reason: 'invalid-toolset', details: { field: 'body.scopeKey' } });
    for (const key of ['', 'a\u0007b', 'tab\there', 'x'.repeat(129)]) {
      expect(await refusal(service.set(ctx(), { scope: 'workspace', scopeKey: key, monthlyUsd: 1, alertAtPct: [50] })), JSON.stringify(key)).toMatchObject({ reason: 'invalid-scope-key' });
    }
    for (const monthlyUsd of [0, 0.1 + 0.2, 1e-7, -5, 2e12]) {
      expect(await refusal(service.set(ctx(), toolsetBudget({ monthlyUsd }))), String(monthlyUsd)).toMatchObject({ status: 400, reason: 'invalid-amount', details: { field: 'body.monthlyUsd' } });
    }
    for (const alertAtPct of [[], [50, 50], [0], [1001], [1.5], Array.from({ length: 21 }, (_, i) => i + 1)]) {
      expect(await refusal(service.set(ctx(), toolsetBudget({ alertAtPct }))), JSON.stringify(alertAtPct)).toMatchObject({ status: 400, reason: 'invalid-body', details: { field: 'body.alertAtPct' } });
    }
    const refused = await refusal(service.set(ctx(), toolsetBudget({ destinations: [{ kind: 'slack', url: 'https://hooks.example.com:8080/x' }] })));
    expect(refused).toMatchObject({ status: 400, reason: 'invalid-destinations', details: { field: 'body.destinations' } });
    expect(refused.human).toContain('port 8080');
    expect(await refusal(service.set(ctx(), toolsetBudget({ destinations: [{ kind: 'metrics' }] })))).toMatchObject({ reason: 'invalid-destinations' });
    expect(await alertCount()).toBe(0);
    expect((await service.list(admin)).budgets).toEqual([]);
  });
});

describe('the evaluator', () => {
  beforeEach(reset);

  it('opens one alert per threshold crossed, with its fact and deliveries; a rerun opens nothing; a later crossing one more', async () => {
    const service = serviceOn(database.db);
    const { budget } = await service.set(ctx(), toolsetBudget({ destinations: [WEBHOOK, { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/cost' }] }));
    await service.set(ctx(), { scope: 'workspace', scopeKey: 'quiet', monthlyUsd: 10, alertAtPct: [50], destinations: [] });
    await record('2026-11-10', 900_000_000n); // 60 % of 1500
    const factsBefore = (await facts()).length;

    expect(await service.evaluate(clock.now(), log)).toEqual({ budgetsEvaluated: 2, monthsEvaluated: 2, alertsOpened: 1, failed: 0 });
    const [alert] = (await service.listAlerts(admin, {})).alerts;
    expect(alert).toEqual({
      id: expect.any(String),
      budgetId: budget.id,
      scope: 'toolset',
      scopeKey: 'crawler-lab',
      monthBucket: '2026-11',
      thresholdPct: 50,
      monthlyUsd: 1500,
      observedUsd: 900,
      status: 'open',
      firedAt: T0.toISOString(),
      ackedAt: null,
      ackedBy: null,
      resolvedAt: null,
    });
    const fired = (await facts()).slice(factsBefore);
    expect(fired).toEqual([{ source: 'CostAlert', source_id: alert!.id, kind: 'cost-alert-fired', actor: null, payload: alert }]);
    const sent = await deliveries();
    expect(sent.map((d) => [d.source_id, d.destination.kind, d.status]).sort()).toEqual([
      [alert!.id, 'slack', 'pending'],
      [alert!.id, 'webhook', 'pending'],
    ]);
    expect(sent[0]!.payload).toEqual(sent[1]!.payload);
    expect(sent[0]!.payload).toMatchObject({
      source: 'cost-alert',
      sourceId: alert!.id,
      severity: 'warning',
      firedAt: T0.toISOString(),
      title: 'Cost budget of toolset crawler-lab: 50% of 1500 USD reached in 2026-11',
      details: { alert, observedPct: 60, budget: { id: budget.id, monthlyUsd: 1500, alertAtPct: [50, 80, 100] } },
    });
    expect(sent[0]!.payload.text).toContain('900 USD, 60% of its monthly budget of 1500 USD');

    clock.advance(15 * 60_000);
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ alertsOpened: 0, failed: 0 });
    expect(await alertCount()).toBe(1);
    expect(await facts()).toHaveLength(factsBefore + 1);
    expect(await deliveries()).toHaveLength(2);

    // Spend reaches 100 %: 80 and 100 open (100 is critical); 50 stays as it was.
    await record('2026-11-11', 600_000_000n);
    clock.advance(15 * 60_000);
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ alertsOpened: 2 });
    const all = (await service.listAlerts(admin, { status: 'all' })).alerts;
    // Newest first; the two fired together in either order.
    expect(all.map((a) => [a.thresholdPct, a.observedUsd, a.firedAt]).slice(0, 2).sort()).toEqual([
      [100, 1500, clock.now().toISOString()],
      [80, 1500, clock.now().toISOString()],
    ]);
    expect(all.map((a) => [a.thresholdPct, a.observedUsd, a.firedAt])[2]).toEqual([50, 900, T0.toISOString()]);
    expect(await facts('cost-alert-fired')).toHaveLength(3);
    const critical = (await deliveries()).filter((d) => d.payload.severity === 'critical');
    expect(critical).toHaveLength(2);
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ alertsOpened: 0 });
  });

  it('opens each alert once when two instances evaluate at the same moment', async () => {
    const one = serviceOn(database.db);
    const two = serviceOn(second.db);
    await one.set(ctx(), toolsetBudget({ alertAtPct: [10, 20, 30, 40, 50, 60] }));
    await one.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 100, alertAtPct: [100, 200, 300] });
    await record('2026-11-12', 1_000_000_000n);
    const factsBefore = (await facts('cost-alert-fired')).length;
    const runs = await Promise.all([one.evaluate(clock.now(), log), two.evaluate(clock.now(), log), one.evaluate(clock.now(), log)]);
    expect(runs.reduce((n, r) => n + r.alertsOpened, 0)).toBe(9);
    expect(runs.every((r) => r.failed === 0)).toBe(true);
    expect(await alertCount()).toBe(9);
    expect(await facts('cost-alert-fired')).toHaveLength(factsBefore + 9);
    // The empire budget has no destinations of its own (none configured): only the toolset's 6 alerts are sent.
    expect(await deliveries()).toHaveLength(6);
  });

  it('keeps evaluating the previous month for three days, for the records that arrive late', async () => {
    const service = serviceOn(database.db);
    clock.set('2026-10-20T00:00:00.000Z');
    await service.set(ctx(), toolsetBudget({ monthlyUsd: 100, alertAtPct: [50, 100] }));
    await record('2026-11-28', 60_000_000n);
    clock.set('2026-11-30T23:45:00.000Z');
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ monthsEvaluated: 1, alertsOpened: 1 });
    // November's last day, billed on 2 December.
    await record('2026-11-30', 50_000_000n);
    await record('2026-12-01', 10_000_000n);
    clock.set('2026-12-02T06:00:00.000Z');
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ budgetsEvaluated: 1, monthsEvaluated: 2, alertsOpened: 1 });
    const all = (await service.listAlerts(admin, { status: 'all' })).alerts;
    expect(all.map((a) => [a.monthBucket, a.thresholdPct, a.observedUsd])).toEqual([
      ['2026-11', 100, 110],
      ['2026-11', 50, 60],
    ]);
    // After the third day November is left alone, whatever arrives.
    await record('2026-11-29', 1_000_000_000n);
    clock.set('2026-12-04T00:00:00.000Z');
    expect(await service.evaluate(clock.now(), log)).toMatchObject({ monthsEvaluated: 1, alertsOpened: 0 });
    // December's own spend (10 of 100) crosses nothing.
    expect((await service.list(admin)).budgets[0]).toMatchObject({ monthBucket: '2026-12', observedUsd: 10, observedPct: 10, crossedThresholds: [] });
  });

  it('counts a budget whose spend cannot be read as failed and goes on with the others', async () => {
    const errors: string[] = [];
    const config = loadConfig({});
    const failing = createCostBudgetService({
      db: database.db,
      clock,
      audit: createAuditLog({ clock }),
      outbound: createOutbound({ db: database.db, clock, config, log }),
      config,
      spend: async (filter, from, to) => {
        if (filter.toolset === 'crawler-lab') throw new Error('cost records unreadable');
        return spendOver(database.db)(filter, from, to);
      },
    });
    await failing.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 1, alertAtPct: [50] });
    await serviceOn(database.db).set(ctx(), toolsetBudget());
    await record('2026-11-12', 1_000_000n);
    const stats = await failing.evaluate(clock.now(), { error: (_d, message) => errors.push(message) });
    expect(stats).toEqual({ budgetsEvaluated: 2, monthsEvaluated: 1, alertsOpened: 1, failed: 1 });
    expect(errors).toEqual(['cost budget evaluation failed']);
  });
});

describe('acknowledging and resolving', () => {
  beforeEach(reset);

  /** Opens alerts at 50, 80 and 100 % of a toolset budget and of the empire budget; returns their ids by scope and threshold. */
  async function openAlerts() {
    const service = serviceOn(database.db);
    await service.set(ctx(), toolsetBudget({ monthlyUsd: 100, alertAtPct: [50, 80, 100] }));
    await service.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 100, alertAtPct: [50] });
    await record('2026-11-12', 100_000_000n);
    await service.evaluate(clock.now(), log);
    const ids = new Map((await service.listAlerts(admin, { status: 'all' })).alerts.map((a) => [`${a.scope}:${a.thresholdPct}`, a.id]));
    return { service, id: (key: string) => ids.get(key)! };
  }

  async function alertRow(service: ReturnType<typeof serviceOn>, id: string) {
    return (await service.listAlerts(admin, { status: 'all' })).alerts.find((a) => a.id === id)!;
  }

  it('walks every allowed move of the state table with its timestamps and facts', async () => {
    const { service, id } = await openAlerts();
    const a = id('toolset:50');
    const b = id('toolset:80');
    const factsBefore = (await facts()).length;

    // open → acknowledged
    clock.set('2026-11-20T11:00:00.000Z');
    expect(await service.acknowledge(ctx(principal('alice')), a)).toEqual({ ok: true, alert: { id: a, status: 'acknowledged' } });
    expect(await alertRow(service, a)).toMatchObject({ status: 'acknowledged', ackedAt: '2026-11-20T11:00:00.000Z', ackedBy: 'alice', resolvedAt: null });

    // acknowledged → acknowledged: refreshed
    clock.set('2026-11-20T12:00:00.000Z');
    expect(await service.acknowledge(ctx(principal('bob')), a)).toEqual({ ok: true, alert: { id: a, status: 'acknowledged' } });
    expect(await alertRow(service, a)).toMatchObject({ status: 'acknowledged', ackedAt: '2026-11-20T12:00:00.000Z', ackedBy: 'bob', resolvedAt: null });

    // acknowledged → resolved: the acknowledgement kept
    clock.set('2026-11-20T13:00:00.000Z');
    expect(await service.resolve(ctx(principal('carol')), a)).toEqual({ ok: true, alert: { id: a, status: 'resolved' } });
    expect(await alertRow(service, a)).toMatchObject({ status: 'resolved', ackedAt: '2026-11-20T12:00:00.000Z', ackedBy: 'bob', resolvedAt: '2026-11-20T13:00:00.000Z' });

    // open → resolved: ackedAt stamped too
    clock.set('2026-11-20T14:00:00.000Z');
    expect(await service.resolve(ctx(principal('dave')), b)).toEqual({ ok: true, alert: { id: b, status: 'resolved' } });
    expect(await alertRow(service, b)).toMatchObject({ status: 'resolved', ackedAt: '2026-11-20T14:00:00.000Z', ackedBy: 'dave', resolvedAt: '2026-11-20T14:00:00.000Z' });

    const recorded = (await facts()).slice(factsBefore);
    expect(recorded.map((f) => [f.source, f.source_id, f.kind, f.actor, (f.payload as { status: string }).status])).toEqual([
      ['CostAlert', a, 'cost-alert-acknowledged', 'alice', 'acknowledged'],
      ['CostAlert', a, 'cost-alert-acknowledged', 'bob', 'acknowledged'],
      ['CostAlert', a, 'cost-alert-resolved', 'carol', 'resolved'],
      ['CostAlert', b, 'cost-alert-resolved', 'dave', 'resolved'],
    ]);
    expect(recorded[3]!.payload).toEqual(await alertRow(service, b));
  });

  it('answers 409 to every move out of resolved and 404 to an unknown alert, changing nothing', async () => {
    const { service, id } = await openAlerts();
    const a = id('toolset:50');
    await service.resolve(ctx(), a);
    const before = await alertRow(service, a);
    const factsBefore = (await facts()).length;
    clock.advance(60_000);
    for (const action of ['ack', 'resolve'] as AlertAction[]) {
      const refused = await refusal(action === 'ack' ? service.acknowledge(ctx(), a) : service.resolve(ctx(), a));
      expect(refused).toMatchObject({ status: 409, reason: 'conflict' });
      expect(refused.human).toContain('resolved');
    }
    expect(await alertRow(service, a)).toEqual(before);
    expect(await facts()).toHaveLength(factsBefore);
    expect(await refusal(service.acknowledge(ctx(), '00000000-0000-4000-8000-000000000000'))).toMatchObject({ status: 404, reason: 'not-found' });
    expect(await refusal(service.resolve(ctx(), '00000000-0000-4000-8000-000000000000'))).toMatchObject({ status: 404, reason: 'not-found' });
  });

  it('serialises concurrent calls on one alert: one resolve wins, the other is 409', async () => {
    const { id } = await openAlerts();
    const a = id('toolset:50');
    const one = serviceOn(database.db);
    const two = serviceOn(second.db);
    const factsBefore = (await facts()).length;
    const resolvedBefore = (await facts('cost-alert-resolved')).length;
    const outcomes = await Promise.allSettled([one.resolve(ctx(), a), two.resolve(ctx(), a)]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ status: 409, reason: 'conflict' });
    expect(await facts('cost-alert-resolved')).toHaveLength(resolvedBefore + 1);
    expect(await facts()).toHaveLength(factsBefore + 1);
  });

  it('lists alerts newest first by status, with the count of open ones and a checked limit', async () => {
    const { service, id } = await openAlerts();
    await service.acknowledge(ctx(), id('toolset:50'));
    await service.resolve(ctx(), id('toolset:80'));
    const open = await service.listAlerts(admin, {});
    expect(open.status).toBe('open');
    expect(open.openCount).toBe(2);
    expect(open.alerts.map((a) => `${a.scope}:${a.thresholdPct}`).sort()).toEqual(['empire:50', 'toolset:100']);
    expect((await service.listAlerts(admin, { status: 'acknowledged' })).alerts.map((a) => a.id)).toEqual([id('toolset:50')]);
    expect(await service.listAlerts(admin, { status: 'resolved' })).toMatchObject({ status: 'resolved', openCount: 2, alerts: [{ id: id('toolset:80') }] });
    const all = await service.listAlerts(admin, { status: 'all', limit: '3' });
    expect(all.alerts).toHaveLength(3);
    expect(all.openCount).toBe(2);
    expect((await service.listAlerts(admin, { status: 'all', limit: '500' })).alerts).toHaveLength(4);
    for (const limit of ['0', '501', 'abc', '1.5', '-1', '']) {
      expect(await refusal(service.listAlerts(admin, { limit })), limit).toMatchObject({ status: 400, reason: 'invalid-query', details: { field: 'query.limit' } });
    }
  });
});

describe('a token bound to toolsets', () => {
  beforeEach(reset);
  const bound = principal('lab-bot', ['crawler-lab']);

  it('sets toolset budgets of its toolsets only', async () => {
    const service = serviceOn(database.db);
    expect((await service.set(ctx(bound), toolsetBudget())).budget.scopeKey).toBe('crawler-lab');
    const inputs: SetBudgetInput[] = [
      toolsetBudget({ scopeKey: 'probe-kit' }),
      { scope: 'empire', scopeKey: '*', monthlyUsd: 1, alertAtPct: [50] },
      { scope: 'workspace', scopeKey: 'ws-1', monthlyUsd: 1, alertAtPct: [50] },
    ];
    for (const input of inputs) {
      const refused = await refusal(service.set(ctx(bound), input));
      expect(refused, input.scope).toMatchObject({ status: 403, reason: 'forbidden' });
    }
    expect((await service.list(admin)).budgets).toHaveLength(1);
  });

  it('sees and acts on the budgets and alerts of its toolsets only', async () => {
    const service = serviceOn(database.db);
    await service.set(ctx(), toolsetBudget({ monthlyUsd: 10, alertAtPct: [50] }));
    await service.set(ctx(), toolsetBudget({ scopeKey: 'probe-kit', monthlyUsd: 10, alertAtPct: [50] }));
    await service.set(ctx(), { scope: 'empire', scopeKey: '*', monthlyUsd: 10, alertAtPct: [50] });
    await record('2026-11-12', 9_000_000n, { toolset: 'crawler-lab' });
    await record('2026-11-12', 9_000_000n, { toolset: 'probe-kit' });
    await service.evaluate(clock.now(), log);
    expect((await service.list(bound)).budgets.map((b) => b.scopeKey)).toEqual(['crawler-lab']);
    const mine = await service.listAlerts(bound, { status: 'all' });
    expect(mine.openCount).toBe(1);
    expect(mine.alerts.map((a) => a.scopeKey)).toEqual(['crawler-lab']);
    const others = (await service.listAlerts(admin, {})).alerts.filter((a) => a.scopeKey !== 'crawler-lab');
    expect(others.map((a) => a.scopeKey).sort()).toEqual(['*', 'probe-kit']);
    for (const alert of others) {
      expect(await refusal(service.acknowledge(ctx(bound), alert.id))).toMatchObject({ status: 403, reason: 'forbidden' });
      expect(await refusal(service.resolve(ctx(bound), alert.id))).toMatchObject({ status: 403, reason: 'forbidden' });
    }
    expect(await service.acknowledge(ctx(bound), mine.alerts[0]!.id)).toMatchObject({ ok: true, alert: { status: 'acknowledged' } });
    expect((await service.listAlerts(admin, {})).openCount).toBe(2);
  });
});
