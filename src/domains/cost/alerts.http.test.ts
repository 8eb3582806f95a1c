import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { plainSchema } from '../../platform/http/openapi.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { tokenBoundTo } from '../../../test/helpers/empire.ts';

/**
 * Cost budgets and alerts over HTTP (spec B group 4, D5, D6; docs/cost/alerts.md), through the app
 * as src/app.ts wires it (createCostDomain): a budget set, spend recorded through
 * `POST {v1}/cost/records`, the `cost-budget-evaluate` job run through `POST {v1}/ops/jobs/{job}/run`,
 * the alert listed, acknowledged and resolved, with the refusals the state table and the schemas
 * make; the audit facts read through `GET {v1}/audit/chain`. Real tokens: the admin token, tokens
 * made through `POST {v1}/tokens`, an operator `writer` (operators are added from the CLI) and a
 * token bound to crawler-lab.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
let t: TestApp;
/** The wired registry's budget and alert entries (the records and rollups are src/domains/cost/records.http.test.ts's). */
let endpoints: Endpoint[];
/** Bearer tokens by role; `admin` is ADMIN_TOKEN (operator admin). */
const TOKENS: Record<'reader' | 'writer' | 'lab', string> = { reader: '', writer: '', lab: '' };

beforeAll(async () => {
  t = await startTestApp({ clock });
  endpoints = t.app.endpoints.filter((e) => [`${V1}/cost/budgets`, `${V1}/cost/alerts`].some((p) => e.path.startsWith(p)));
  TOKENS.reader = await t.tokenWith(['read:empire']);
  // An operator of its own, so that acks and audit facts name someone other than admin.
  TOKENS.writer = (await t.app.identity.createOperator({ username: 'writer', scopes: ['write:alerts'] })).token;
  TOKENS.lab = await tokenBoundTo(t, ['read:empire', 'write:alerts'], ['crawler-lab']);
});
afterAll(async () => t?.close());

/** `token`: a role of TOKENS, `undefined` for the admin token, `null` for none. */
const call = (method: 'GET' | 'POST', url: string, options: { token?: keyof typeof TOKENS | null; payload?: object; query?: Record<string, string> } = {}): Promise<LightMyRequestResponse> =>
  t.call({
    method,
    url,
    ...(options.query ? { query: options.query } : {}),
    ...(options.payload ? { payload: options.payload } : {}),
    ...(options.token === undefined ? {} : { token: options.token === null ? null : TOKENS[options.token] }),
  });

let skus = 0;
/** One cost record of `micro` micro-dollars on `day`, through POST {v1}/cost/records. */
async function record(day: string, micro: bigint, toolset = 'crawler-lab') {
  const amountUsd = Number(micro) / 1e6;
  const res = await call('POST', `${V1}/cost/records`, { payload: { records: [{ date: day, toolset, vendor: 'aws', sku: `sku-${++skus}`, amountUsd }] } });
  expect(res.statusCode, res.body).toBe(200);
}

/** The CostAlert audit facts, oldest first, as GET {v1}/audit/chain?source=CostAlert lists them (newest first). */
async function costAlertFacts(): Promise<{ kind: string; actor: string | null; sourceId: string }[]> {
  const res = await call('GET', `${V1}/audit/chain`, { query: { source: 'CostAlert', limit: '500' } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().nextCursor).toBeNull();
  return (res.json().facts as { kind: string; actor: string | null; sourceId: string }[]).reverse();
}

const BUDGET = { scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 1500, alertAtPct: [100, 50, 80], destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/cost', secret: 'cost-secret-0123456789' }] };

describe('the cost endpoints', () => {
  it('declare examples their own schemas accept', () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    for (const e of endpoints) {
      const check = ajv.compile(plainSchema(e.responseSchema) as object);
      expect(check(e.example), `${e.id}: ${JSON.stringify(check.errors)}`).toBe(true);
      for (const part of [e.params, e.query, e.body]) {
        if (part === null) continue;
        const examples = (part as { examples?: unknown[] }).examples;
        expect(examples?.length, e.id).toBeGreaterThan(0);
        const checkPart = ajv.compile(plainSchema(part) as object);
        expect(checkPart(examples![0]), `${e.id}: ${JSON.stringify(checkPart.errors)}`).toBe(true);
      }
    }
    expect(endpoints.map((e) => [e.id, e.method, e.path.slice(V1.length), e.scope, e.tag, e.uiPath])).toEqual([
      ['setCostBudget', 'POST', '/cost/budgets', 'write:alerts', 'cost', '/cost'],
      ['listCostBudgets', 'GET', '/cost/budgets', 'read:empire', 'cost', '/cost'],
      ['listCostAlerts', 'GET', '/cost/alerts', 'read:empire', 'cost', '/cost'],
      ['acknowledgeCostAlert', 'POST', '/cost/alerts/{id}/ack', 'write:alerts', 'cost', '/cost'],
      ['resolveCostAlert', 'POST', '/cost/alerts/{id}/resolve', 'write:alerts', 'cost', '/cost'],
    ]);
  });

  it('answers the POST budget and GET alerts examples sent as is', async () => {
    const set = endpoints.find((e) => e.id === 'setCostBudget')!;
    const res = await call('POST', `${V1}/cost/budgets`, { payload: (set.body as { examples: object[] }).examples[0]! });
    expect(res.statusCode, res.body).toBe(200);
    const list = endpoints.find((e) => e.id === 'listCostAlerts')!;
    const alerts = await call('GET', `${V1}/cost/alerts`, { query: (list.query as { examples: Record<string, string>[] }).examples[0]! });
    expect(alerts.statusCode, alerts.body).toBe(200);
    expect(alerts.json()).toMatchObject({ schema: 'svc-cost-alerts.v1', status: 'all' });
  });

  it('runs a budget from set to resolved: figures, the job, list, ack, resolve and the refusals', async () => {
    const set = await call('POST', `${V1}/cost/budgets`, { payload: BUDGET });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      schema: 'svc-cost-budget.v1',
      generatedAt: '2026-11-20T10:00:00.000Z',
      ok: true,
      budget: { scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 1500, alertAtPct: [50, 80, 100], monthBucket: '2026-11', observedUsd: 0, observedPct: 0, crossedThresholds: [] },
    });
    expect(set.body).not.toContain('cost-secret-0123456789');

    await record('2026-11-19', 1_218_750_000n);
    const budgets = await call('GET', `${V1}/cost/budgets`, { token: 'reader' });
    expect(budgets.statusCode).toBe(200);
    expect(budgets.json().budgets).toEqual([expect.objectContaining({ scopeKey: 'crawler-lab', observedUsd: 1218.75, observedPct: 81.25, crossedThresholds: [50, 80] })]);

    // The job through POST {v1}/ops/jobs/cost-budget-evaluate/run; a rerun opens nothing.
    const first = await call('POST', `${V1}/ops/jobs/cost-budget-evaluate/run`);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().run).toMatchObject({ outcome: 'ok', stats: { budgetsEvaluated: 1, monthsEvaluated: 1, alertsOpened: 2, failed: 0 } });
    expect(await runJob(t, 'cost-budget-evaluate')).toMatchObject({ alertsOpened: 0 });

    const open = await call('GET', `${V1}/cost/alerts`, { token: 'reader' });
    expect(open.statusCode).toBe(200);
    expect(open.json()).toMatchObject({ schema: 'svc-cost-alerts.v1', status: 'open', openCount: 2 });
    const alerts = open.json().alerts as { id: string; thresholdPct: number; observedUsd: number; status: string }[];
    expect(alerts.map((a) => a.thresholdPct).sort()).toEqual([50, 80]);
    expect(alerts.every((a) => a.observedUsd === 1218.75 && a.status === 'open')).toBe(true);
    const [a, b] = alerts.map((x) => x.id) as [string, string];

    clock.set('2026-11-20T11:00:00.000Z');
    const ack = await call('POST', `${V1}/cost/alerts/${a}/ack`, { token: 'writer', payload: {} });
    expect(ack.statusCode, ack.body).toBe(200);
    expect(ack.json()).toEqual({ schema: 'svc-cost-alert-ack.v1', generatedAt: '2026-11-20T11:00:00.000Z', ok: true, alert: { id: a, status: 'acknowledged' } });
    // An empty body is the same as {}.
    expect((await t.call({ method: 'POST', url: `${V1}/cost/alerts/${a}/ack`, token: TOKENS.writer })).statusCode).toBe(200);

    const resolved = await call('POST', `${V1}/cost/alerts/${b}/resolve`, { payload: {} });
    expect(resolved.json()).toEqual({ schema: 'svc-cost-alert-resolve.v1', generatedAt: '2026-11-20T11:00:00.000Z', ok: true, alert: { id: b, status: 'resolved' } });
    const all = (await call('GET', `${V1}/cost/alerts`, { query: { status: 'all', limit: '10' } })).json();
    expect(all.openCount).toBe(0);
    expect(all.alerts.find((x: { id: string }) => x.id === b)).toMatchObject({ status: 'resolved', ackedAt: '2026-11-20T11:00:00.000Z', ackedBy: 'admin', resolvedAt: '2026-11-20T11:00:00.000Z' });
    expect(all.alerts.find((x: { id: string }) => x.id === a)).toMatchObject({ status: 'acknowledged', ackedBy: 'writer', resolvedAt: null });

    for (const action of ['ack', 'resolve']) {
      const refused = await call('POST', `${V1}/cost/alerts/${b}/${action}`, { payload: {} });
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
    }
    const unknown = await call('POST', `${V1}/cost/alerts/00000000-0000-4000-8000-000000000000/ack`, { payload: {} });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ reason: 'not-found' });
    const badId = await call('POST', `${V1}/cost/alerts/not-a-uuid/resolve`, { payload: {} });
    expect(badId.statusCode).toBe(400);
    expect(badId.json()).toMatchObject({ reason: 'invalid-params', field: 'path.id' });
    expect((await call('POST', `${V1}/cost/alerts/${a}/ack`, { payload: { note: 'x' } })).json()).toMatchObject({ reason: 'invalid-body' });

    const facts = await costAlertFacts();
    expect(facts.map((f) => f.kind)).toEqual(['cost-alert-fired', 'cost-alert-fired', 'cost-alert-acknowledged', 'cost-alert-acknowledged', 'cost-alert-resolved']);
    expect(facts.slice(2).map((f) => [f.sourceId, f.actor])).toEqual([
      [a, 'writer'],
      [a, 'writer'],
      [b, 'admin'],
    ]);
    // No endpoint lists outbound deliveries (src/platform/outbound/endpoints.ts has the chat test only): the table.
    const deliveries = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM outbound_deliveries WHERE source = 'cost-alert'`));
    expect(deliveries[0]!.n).toBe(2);
  });

  it('refuses bad input with the field named', async () => {
    const refusals: [object, string, string][] = [
      [{ ...BUDGET, monthlyUsd: 0 }, 'invalid-body', 'body.monthlyUsd'],
      [{ ...BUDGET, monthlyUsd: '1500' }, 'invalid-body', 'body.monthlyUsd'],
      [{ ...BUDGET, monthlyUsd: 0.1234567 }, 'invalid-amount', 'body.monthlyUsd'],
      [{ ...BUDGET, alertAtPct: [50, 50] }, 'invalid-body', 'body.alertAtPct'],
      [{ ...BUDGET, alertAtPct: [] }, 'invalid-body', 'body.alertAtPct'],
      [{ ...BUDGET, alertAtPct: [1001] }, 'invalid-body', 'body.alertAtPct'],
      [{ ...BUDGET, scope: 'region' }, 'invalid-body', 'body.scope'],
      [{ ...BUDGET, scope: 'empire' }, 'invalid-scope-key', 'body.scopeKey'],
      [{ ...BUDGET, scopeKey: 'x!' }, 'invalid-toolset', 'body.scopeKey'],
      [{ ...BUDGET, destinations: [{ kind: 'slack', url: 'http://127.0.0.1/hook' }] }, 'invalid-destinations', 'body.destinations'],
      [{ scope: 'toolset', scopeKey: 'crawler-lab', monthlyUsd: 1 }, 'invalid-body', 'body.alertAtPct'],
    ];
    for (const [payload, reason, field] of refusals) {
      const res = await call('POST', `${V1}/cost/budgets`, { payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toMatchObject({ schema: 'svc-error.v1', reason });
      expect(String(res.json().field), JSON.stringify(payload)).toContain(field);
    }
    const queries: Record<string, string>[] = [{ limit: '0' }, { limit: '501' }, { limit: 'ten' }, { status: 'closed' }, { page: '2' }];
    for (const query of queries) {
      const res = await call('GET', `${V1}/cost/alerts`, { query });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json().reason).toBe('invalid-query');
    }
  });

  it('asks for a credential and the scope of each endpoint', async () => {
    expect((await call('GET', `${V1}/cost/budgets`, { token: null })).statusCode).toBe(401);
    expect((await call('GET', `${V1}/cost/alerts`, { token: 'writer' })).statusCode).toBe(403);
    expect((await call('POST', `${V1}/cost/budgets`, { token: 'reader', payload: BUDGET })).statusCode).toBe(403);
    expect((await call('POST', `${V1}/cost/alerts/00000000-0000-4000-8000-000000000000/ack`, { token: 'reader', payload: {} })).statusCode).toBe(403);
  });

  it('keeps a token bound to toolsets to its own toolsets\' budgets and alerts', async () => {
    const own = await call('POST', `${V1}/cost/budgets`, { token: 'lab', payload: { ...BUDGET, monthlyUsd: 2000 } });
    expect(own.statusCode, own.body).toBe(200);
    for (const payload of [
      { ...BUDGET, scopeKey: 'probe-kit' },
      { scope: 'empire', scopeKey: '*', monthlyUsd: 10, alertAtPct: [50] },
      { scope: 'workspace', scopeKey: 'ws-1', monthlyUsd: 10, alertAtPct: [50] },
    ]) {
      const res = await call('POST', `${V1}/cost/budgets`, { token: 'lab', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(403);
      expect(res.json().reason).toBe('forbidden');
    }
    // An empire budget and its alert, out of the bound token's reach.
    expect((await call('POST', `${V1}/cost/budgets`, { payload: { scope: 'empire', scopeKey: '*', monthlyUsd: 1, alertAtPct: [100] } })).statusCode).toBe(200);
    await runJob(t, 'cost-budget-evaluate');
    const empireAlert = (await call('GET', `${V1}/cost/alerts`)).json().alerts.find((x: { scope: string }) => x.scope === 'empire');
    expect(empireAlert).toBeDefined();
    expect((await call('POST', `${V1}/cost/alerts/${empireAlert.id}/ack`, { token: 'lab', payload: {} })).statusCode).toBe(403);
    const seen = (await call('GET', `${V1}/cost/budgets`, { token: 'lab' })).json().budgets.map((x: { scope: string; scopeKey: string }) => `${x.scope}:${x.scopeKey}`);
    expect(seen).toEqual(['toolset:crawler-lab']);
    const alerts = (await call('GET', `${V1}/cost/alerts`, { token: 'lab', query: { status: 'all' } })).json();
    expect(alerts.alerts.every((x: { scope: string; scopeKey: string }) => x.scope === 'toolset' && x.scopeKey === 'crawler-lab')).toBe(true);
    expect(alerts.openCount).toBe(0);
  });
});
