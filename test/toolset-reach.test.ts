import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, tokenBoundTo } from './helpers/empire.ts';

/**
 * A token bound to toolsets acts on those toolsets only (docs/operations.md, "Security model"):
 * their events, their signing keys and signed-only policy, their alert rules, their cost budgets,
 * alerts and records. The attack: a token bound to one toolset, holding write:alerts, tries to
 * swap another toolset's keys or switch it back out of signed-only.
 */

let t: TestApp;
let bound: string;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_OUTBOUND_ALLOWED_PORTS: '443' } });
  bound = await tokenBoundTo(t, ['write:events', 'write:alerts', 'read:empire', 'read:alerts'], ['own-lab']);
});
afterAll(() => t.close());

const refusedFor = (res: { statusCode: number; json: () => { reason?: string; human?: string } }, toolset: string) => {
  expect(res.statusCode).toBe(403);
  expect(res.json().reason).toBe('forbidden');
  expect(res.json().human).toContain(toolset);
};

describe('a token bound to toolsets', () => {
  it('writes events for its own toolset only', async () => {
    expect((await ingestEmpire(t, 'own-lab', [{ id: 'e1', eventType: 'x' }], bound)).statusCode).toBe(200);
    refusedFor(await ingestEmpire(t, 'other-lab', [{ id: 'e1', eventType: 'x' }], bound), 'other-lab');
  });

  it('registers and retires keys of its own toolset only', async () => {
    const own = await t.call({ method: 'POST', url: `${V1}/provenance/keys`, token: bound, payload: { toolset: 'own-lab', publicKeyB64: nodeKeyPair().publicKeyB64 } });
    expect(own.statusCode, own.body).toBe(200);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/provenance/keys`, token: bound, payload: { toolset: 'other-lab', publicKeyB64: nodeKeyPair().publicKeyB64 } }), 'other-lab');

    const othersKey = await registerKey(t, 'other-lab', nodeKeyPair().publicKeyB64);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/provenance/keys/${othersKey}/retire`, token: bound, payload: {} }), 'other-lab');
    const keys = await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=other-lab` });
    expect(keys.json<{ keys: { status: string }[] }>().keys.map((k) => k.status)).toEqual(['active']);
  });

  it('cannot switch another toolset out of signed-only', async () => {
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/toolsets/other-lab/policy`, payload: { requireSigned: true } })).statusCode).toBe(200);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/provenance/toolsets/other-lab/policy`, token: bound, payload: { requireSigned: false } }), 'other-lab');
    expect((await t.call({ method: 'GET', url: `${V1}/provenance/toolsets/other-lab/policy` })).json().requireSigned).toBe(true);
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/toolsets/own-lab/policy`, token: bound, payload: { requireSigned: true } })).statusCode).toBe(200);
  });

  it('creates and changes alert rules of its own toolset only', async () => {
    const rule = (toolset: string) => ({
      name: 'busy',
      predicate: { kind: 'empire_count_gte', count: 10, windowMinutes: 15 },
      destinations: [{ kind: 'webhook', url: 'https://hooks.example.com/obs', secret: 'hook-secret-0123456789' }],
    });
    const own = await t.call({ method: 'POST', url: `${V1}/empire/own-lab/alerts`, token: bound, payload: rule('own-lab') });
    expect(own.statusCode, own.body).toBe(200);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/empire/other-lab/alerts`, token: bound, payload: rule('other-lab') }), 'other-lab');

    const others = await t.call({ method: 'POST', url: `${V1}/empire/other-lab/alerts`, payload: rule('other-lab') });
    expect(others.statusCode, others.body).toBe(200);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/empire/alerts/${others.json().id}`, token: bound, payload: { enabled: false } }), 'other-lab');
    expect((await t.call({ method: 'POST', url: `${V1}/empire/alerts/${own.json().id}`, token: bound, payload: { enabled: false } })).statusCode).toBe(200);
  });

  it('sets cost budgets, sees cost alerts and writes cost records of its own toolset only', async () => {
    const budget = (scope: string, scopeKey: string) => ({ scope, scopeKey, monthlyUsd: 1, alertAtPct: [100], destinations: [] });
    const setBudget = (payload: object, token?: string) => t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload, ...(token === undefined ? {} : { token }) });
    expect((await setBudget(budget('toolset', 'own-lab'), bound)).statusCode).toBe(200);
    refusedFor(await setBudget(budget('toolset', 'other-lab'), bound), 'other-lab');
    const empire = await setBudget(budget('empire', '*'), bound);
    expect(empire.statusCode).toBe(403);
    expect(empire.json()).toMatchObject({ reason: 'forbidden', human: 'This token is bound to toolsets and may not set the budget of the empire.' });
    expect((await setBudget(budget('toolset', 'other-lab'))).statusCode).toBe(200);
    expect((await setBudget(budget('empire', '*'))).statusCode).toBe(200);

    // Cost records: its own toolset's only; the admin's spend of other-lab puts each budget over.
    const today = new Date().toISOString().slice(0, 10);
    const records = (toolset: string) => ({ records: [{ date: today, toolset, vendor: 'aws', sku: 'ec2', amountUsd: 2 }] });
    expect((await t.call({ method: 'POST', url: `${V1}/cost/records`, token: bound, payload: records('own-lab') })).statusCode).toBe(200);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/cost/records`, token: bound, payload: records('other-lab') }), 'other-lab');
    expect((await t.call({ method: 'POST', url: `${V1}/cost/records`, payload: records('other-lab') })).statusCode).toBe(200);
    expect(await runJob(t, 'cost-budget-evaluate')).toMatchObject({ budgetsEvaluated: 3, alertsOpened: 3, failed: 0 });

    const scopes = (list: { scope: string; scopeKey: string }[]) => list.map((x) => `${x.scope}:${x.scopeKey}`).sort();
    expect(scopes((await t.call({ method: 'GET', url: `${V1}/cost/budgets`, token: bound })).json().budgets)).toEqual(['toolset:own-lab']);
    const seen = (await t.call({ method: 'GET', url: `${V1}/cost/alerts`, token: bound })).json();
    expect(scopes(seen.alerts)).toEqual(['toolset:own-lab']);
    expect(seen.openCount).toBe(1);
    const all = (await t.call({ method: 'GET', url: `${V1}/cost/alerts` })).json().alerts as { id: string; scope: string; scopeKey: string }[];
    expect(scopes(all)).toEqual(['empire:*', 'toolset:other-lab', 'toolset:own-lab']);
    refusedFor(await t.call({ method: 'POST', url: `${V1}/cost/alerts/${all.find((x) => x.scopeKey === 'other-lab')!.id}/ack`, token: bound, payload: {} }), 'other-lab');
    const empireAck = await t.call({ method: 'POST', url: `${V1}/cost/alerts/${all.find((x) => x.scope === 'empire')!.id}/ack`, token: bound, payload: {} });
    expect(empireAck.statusCode).toBe(403);
    expect(empireAck.json()).toMatchObject({ reason: 'forbidden', human: 'This token is bound to toolsets and may not acknowledge alerts of the empire.' });
    expect((await t.call({ method: 'POST', url: `${V1}/cost/alerts/${all.find((x) => x.scopeKey === 'own-lab')!.id}/ack`, token: bound, payload: {} })).statusCode).toBe(200);
  });
});
