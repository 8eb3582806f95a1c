import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { ModelPrice } from '../../../platform/llm/prices.ts';
import { AGENT_NAMES, DEFERRABLE_AGENTS } from '../agents/registry.ts';
import { budgetView, createBudgetService, EMPIRE_BUCKET } from './service.ts';

// The monthly model budget (docs/triage/README.md, "Budget"): spend recomputed from the runs' token
// counts on every read, per month and bucket; deferral of the non-safety agents.

describe('budgetView (pure)', () => {
  const now = new Date('2026-11-20T10:00:00.000Z');
  const view = (budgetUsdCents: number, spentUsdCents: number, degradedUntil: Date | null = null) => budgetView({ month: '2026-11', toolset: '*', budgetUsdCents, spentUsdCents, degradedUntil }, now);

  it('gives the share spent in percent with two decimals', () => {
    expect(view(300, 100).pctSpent).toBe(33.33);
    expect(view(300, 200).pctSpent).toBe(66.67);
    expect(view(3, 2).pctSpent).toBe(66.67);
    expect(view(10_000, 1).pctSpent).toBe(0.01);
    expect(view(100_000, 1).pctSpent).toBe(0);
    expect(view(200, 300).pctSpent).toBe(150);
    expect(view(100, 0).pctSpent).toBe(0);
  });

  it('counts a zero budget as spent from the start', () => {
    expect(view(0, 0)).toMatchObject({ pctSpent: 100, isDegraded: true });
    expect(view(0, 5)).toMatchObject({ pctSpent: 100, isDegraded: true });
  });

  it('is degraded once spend reaches the budget, not before', () => {
    expect(view(100, 99).isDegraded).toBe(false);
    expect(view(100, 100).isDegraded).toBe(true);
    expect(view(100, 101).isDegraded).toBe(true);
  });

  it('is degraded while degradedUntil lies ahead, not at or after it', () => {
    expect(view(100, 0, new Date(now.getTime() + 1))).toMatchObject({ isDegraded: true, degradedUntil: '2026-11-20T10:00:00.001Z' });
    expect(view(100, 0, now).isDegraded).toBe(false);
    expect(view(100, 0, new Date(now.getTime() - 1))).toMatchObject({ isDegraded: false, degradedUntil: '2026-11-20T09:59:59.999Z' });
    expect(view(100, 0, null)).toMatchObject({ isDegraded: false, degradedUntil: null });
  });

  it('echoes the bucket', () => {
    expect(view(100, 50)).toEqual({ month: '2026-11', toolset: '*', budgetUsdCents: 100, spentUsdCents: 50, pctSpent: 50, isDegraded: false, degradedUntil: null });
  });
});

// ——— against a database ———

const NOW = new Date('2026-11-20T10:00:00.000Z');
const DEFAULT_BUDGET = 1000;
const clock = new ManualClock(NOW);
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});

const service = (prices: Record<string, ModelPrice> = {}, defaultBudgetUsdCents = DEFAULT_BUDGET) =>
  createBudgetService({ db: database.db, clock, audit: createAuditLog({ clock }), llm: { prices }, defaultBudgetUsdCents });

async function run(toolset: string, model: string, startedAt: string, promptTokens: number, completionTokens: number) {
  await database.db.execute(sql`
    INSERT INTO triage_runs (id, agent, agent_version, engine, model, toolset, toolsets, outcome, started_at, finished_at, params, system_prompt_hash,
      user_message, model_text, prompt_tokens, completion_tokens, attempts, digest, proposal_ids, auto_rejected, schema_version)
    VALUES (${randomUUID()}, 'rule-proposer', 'rule-proposer@1.1.0', 'live', ${model}, ${toolset}, '[]'::jsonb, 'ok', ${startedAt}::timestamptz,
      ${startedAt}::timestamptz, '{}'::jsonb, 'h', '{}', '{}', ${promptTokens}, ${completionTokens}, 1, 'd', '[]'::jsonb, 0, 1)`);
}

async function budget(month: string, toolset: string, budgetUsdCents: number, degradedUntil: string | null = null) {
  await database.db.execute(sql`
    INSERT INTO triage_budgets (month, toolset, budget_usd_cents, degraded_until, updated_at, updated_by)
    VALUES (${month}, ${toolset}, ${budgetUsdCents}, ${degradedUntil}::timestamptz, now(), 'test')
    ON CONFLICT (month, toolset) DO UPDATE SET budget_usd_cents = EXCLUDED.budget_usd_cents, degraded_until = EXCLUDED.degraded_until`);
}

async function reset() {
  await database.db.execute(sql`DELETE FROM triage_runs`);
  await database.db.execute(sql`DELETE FROM triage_budgets`);
}

/**
 * November 2026 (gpt-4o-mini 15 ¢ in / 60 ¢ out per million tokens, gpt-4o 250 / 1000, builtin free):
 * - `*`: 1M in + 1M out of gpt-4o-mini (75 ¢), and 1M in of gpt-4o-mini at exactly 1 November 00:00 (15 ¢);
 * - web-a: 100k in + 10k out of gpt-4o (25 + 10 = 35 ¢);
 * - web-b: 5M + 5M of builtin (0 ¢).
 * `*` sums all of them: gpt-4o-mini 2M in + 1M out = 90 ¢, gpt-4o 35 ¢: 125 ¢.
 * Outside November: 1M in of gpt-4o at 31 October 23:59:59.999 (250 ¢), and one prompt token of
 * gpt-4o-mini for web-a at 1 December 00:00 (rounded up to 1 ¢).
 */
async function seedRuns() {
  await run('*', 'gpt-4o-mini', '2026-11-10T08:00:00.000Z', 1_000_000, 1_000_000);
  await run('*', 'gpt-4o-mini', '2026-11-01T00:00:00.000Z', 1_000_000, 0);
  await run('web-a', 'gpt-4o', '2026-11-15T12:00:00.000Z', 100_000, 10_000);
  await run('web-b', 'builtin', '2026-11-16T12:00:00.000Z', 5_000_000, 5_000_000);
  await run('*', 'gpt-4o', '2026-10-31T23:59:59.999Z', 1_000_000, 0);
  await run('web-a', 'gpt-4o-mini', '2026-12-01T00:00:00.000Z', 1, 0);
}

const spent = (views: { toolset: string; spentUsdCents: number }[]) => Object.fromEntries(views.map((v) => [v.toolset, v.spentUsdCents]));

describe('bucketsOf', () => {
  beforeEach(async () => {
    await reset();
    await seedRuns();
  });

  it('always has the * bucket, with the default budget when none was set, summing every run of the month', async () => {
    expect(await service().bucketsOf('2026-11', NOW)).toEqual([
      { month: '2026-11', toolset: '*', budgetUsdCents: DEFAULT_BUDGET, spentUsdCents: 125, pctSpent: 12.5, isDegraded: false, degradedUntil: null },
    ]);
  });

  it('gives a toolset bucket only the runs charged to it, and sorts * first then by name', async () => {
    await budget('2026-11', 'web-b', 100, '2026-11-25T00:00:00.000Z');
    await budget('2026-11', 'web-a', 35);
    await budget('2026-11', 'web-c', 10);
    await budget('2026-12', 'web-d', 10);
    const views = await service().bucketsOf('2026-11', NOW);
    expect(views.map((v) => v.toolset)).toEqual(['*', 'web-a', 'web-b', 'web-c']);
    expect(spent(views)).toEqual({ '*': 125, 'web-a': 35, 'web-b': 0, 'web-c': 0 });
    expect(views[1]).toMatchObject({ budgetUsdCents: 35, pctSpent: 100, isDegraded: true });
    expect(views[2]).toMatchObject({ isDegraded: true, degradedUntil: '2026-11-25T00:00:00.000Z' });
  });

  it('reads each month by its own runs and budgets: the boundaries belong to the month they start', async () => {
    await budget('2026-10', '*', 300);
    expect(await service().bucketsOf('2026-10', NOW)).toEqual([{ month: '2026-10', toolset: '*', budgetUsdCents: 300, spentUsdCents: 250, pctSpent: 83.33, isDegraded: false, degradedUntil: null }]);
    await budget('2026-12', 'web-a', 5);
    expect(spent(await service().bucketsOf('2026-12', NOW))).toEqual({ '*': 1, 'web-a': 1 });
    expect(spent(await service().bucketsOf('2027-01', NOW))).toEqual({ '*': 0 });
  });

  it('takes a stored * budget over the default', async () => {
    await budget('2026-11', '*', 120);
    expect((await service().bucketsOf('2026-11', NOW))[0]).toMatchObject({ toolset: '*', budgetUsdCents: 120, spentUsdCents: 125, isDegraded: true });
  });

  it('prices with the llm.prices overrides merged over the shipped table', async () => {
    await budget('2026-11', 'web-a', 1000);
    // gpt-4o-mini free: * keeps only web-a's gpt-4o.
    expect(spent(await service({ 'gpt-4o-mini': { inputCentsPerMTok: 0, outputCentsPerMTok: 0 } }).bucketsOf('2026-11', NOW))).toEqual({ '*': 35, 'web-a': 35 });
    // gpt-4o at 1000 ¢ both ways: web-a = 100k + 10k tokens at 10 ¢ a thousand = 110 ¢; * = 90 + 110.
    expect(spent(await service({ 'gpt-4o': { inputCentsPerMTok: 1000, outputCentsPerMTok: 1000 } }).bucketsOf('2026-11', NOW))).toEqual({ '*': 200, 'web-a': 110 });
    // A builtin model priced after all.
    expect(spent(await service({ builtin: { inputCentsPerMTok: 1, outputCentsPerMTok: 1 } }).bucketsOf('2026-11', NOW))).toMatchObject({ '*': 135 });
  });
});

describe('deferral and assertRuns', () => {
  beforeEach(async () => {
    await reset();
    await seedRuns();
  });

  const NEXT_MONTH_SEC = (Date.parse('2026-12-01T00:00:00.000Z') - NOW.getTime()) / 1000;

  it('never defers the incident classifier, even with every bucket spent', async () => {
    await budget('2026-11', '*', 0);
    await budget('2026-11', 'web-a', 0, '2027-01-01T00:00:00.000Z');
    const s = service();
    expect(await s.deferral('incident-classifier', '*', NOW)).toBeNull();
    expect(await s.deferral('incident-classifier', 'web-a', NOW)).toBeNull();
    await expect(s.assertRuns('incident-classifier', 'web-a', NOW)).resolves.toBeUndefined();
    // Every other agent (and the forecaster) is deferred.
    for (const agent of AGENT_NAMES.filter((a) => a !== 'incident-classifier')) expect(await s.deferral(agent, '*', NOW), agent).not.toBeNull();
    expect(await s.deferral('forecaster', '*', NOW)).not.toBeNull();
    expect([...DEFERRABLE_AGENTS].sort()).toEqual(['compliance-narrator', 'forecaster', 'investigation-proposer', 'postmortem-writer', 'rule-proposer']);
  });

  it('lets every agent run while no bucket is degraded', async () => {
    for (const agent of DEFERRABLE_AGENTS) expect(await service().deferral(agent, 'web-a', NOW)).toBeNull();
  });

  it('defers everything when * is spent, until the next month', async () => {
    await budget('2026-11', '*', 125);
    const deferred = await service().deferral('rule-proposer', 'web-z', NOW);
    expect(deferred).toEqual({ bucket: expect.objectContaining({ toolset: '*', spentUsdCents: 125, budgetUsdCents: 125, isDegraded: true }), retryAfterSec: NEXT_MONTH_SEC });
  });

  it('defers a run charged to a spent toolset bucket, not runs of other buckets', async () => {
    await budget('2026-11', 'web-a', 35);
    const s = service();
    expect(await s.deferral('postmortem-writer', 'web-a', NOW)).toMatchObject({ bucket: { toolset: 'web-a' }, retryAfterSec: NEXT_MONTH_SEC });
    expect(await s.deferral('postmortem-writer', 'web-b', NOW)).toBeNull();
    expect(await s.deferral('postmortem-writer', '*', NOW)).toBeNull();
  });

  it('retries at degradedUntil while the spend is under the budget', async () => {
    await budget('2026-11', 'web-b', 100, '2026-11-20T10:00:30.250Z');
    expect(await service().deferral('investigation-proposer', 'web-b', NOW)).toMatchObject({ bucket: { toolset: 'web-b', degradedUntil: '2026-11-20T10:00:30.250Z' }, retryAfterSec: 31 });
  });

  it('retries at the next month when the spend reached the budget, whatever degradedUntil says', async () => {
    await budget('2026-11', 'web-a', 35, '2026-11-20T11:00:00.000Z');
    expect((await service().deferral('rule-proposer', 'web-a', NOW))!.retryAfterSec).toBe(NEXT_MONTH_SEC);
  });

  it('waits for the last of several degraded buckets: a short * degradation does not hide a spent toolset bucket', async () => {
    await budget('2026-11', '*', 1000, '2026-11-20T11:00:00.000Z');
    await budget('2026-11', 'web-a', 35);
    const s = service();
    expect(await s.deferral('rule-proposer', 'web-a', NOW)).toMatchObject({ bucket: { toolset: 'web-a' }, retryAfterSec: NEXT_MONTH_SEC });
    // A run charged elsewhere waits only for *.
    expect(await s.deferral('rule-proposer', 'web-b', NOW)).toMatchObject({ bucket: { toolset: '*' }, retryAfterSec: 3600 });
  });

  it('retries at the end of the month when degradedUntil lies beyond it: the next month has buckets of its own', async () => {
    await budget('2026-11', 'web-b', 100, '2026-12-15T00:00:00.000Z');
    expect((await service().deferral('rule-proposer', 'web-b', NOW))!.retryAfterSec).toBe(NEXT_MONTH_SEC);
    expect(await service().deferral('rule-proposer', 'web-b', new Date('2026-12-01T00:00:00.000Z'))).toBeNull();
  });

  it('retries in at least one second', async () => {
    await budget('2026-11', 'web-b', 100, '2026-11-20T10:00:00.001Z');
    expect((await service().deferral('rule-proposer', 'web-b', NOW))!.retryAfterSec).toBe(1);
  });

  it('retries at 1 January for a December budget', async () => {
    const december = new Date('2026-12-31T23:00:00.000Z');
    await budget('2026-12', '*', 0);
    expect((await service().deferral('rule-proposer', '*', december))!.retryAfterSec).toBe(3600);
  });

  it('does not defer for a degradedUntil already past', async () => {
    await budget('2026-11', '*', 1000, '2026-11-20T09:59:59.000Z');
    expect(await service().deferral('rule-proposer', '*', NOW)).toBeNull();
  });

  it('assertRuns answers 429 budget-exhausted with Retry-After details naming the bucket and why', async () => {
    await budget('2026-11', 'web-a', 35);
    await budget('2026-11', 'web-b', 100, '2026-11-21T10:00:00.000Z');
    const s = service();
    const spentError = await s.assertRuns('rule-proposer', 'web-a', NOW).then(
      () => null,
      (e: unknown) => e,
    );
    expect(spentError).toBeInstanceOf(ServiceError);
    expect(spentError).toMatchObject({
      status: 429,
      reason: 'budget-exhausted',
      human: 'The 2026-11 model budget of bucket web-a has spent 35 of 35 cents: the rule-proposer is deferred; the incident classifier still runs.',
      details: { retryAfterSec: NEXT_MONTH_SEC, month: '2026-11', toolset: 'web-a' },
    });
    await expect(s.assertRuns('forecaster', 'web-b', NOW)).rejects.toMatchObject({
      status: 429,
      human: 'The 2026-11 model budget of bucket web-b is degraded until 2026-11-21T10:00:00.000Z: the forecaster is deferred; the incident classifier still runs.',
      details: { retryAfterSec: 86_400, toolset: 'web-b' },
    });
    await expect(s.assertRuns('rule-proposer', 'web-c', NOW)).resolves.toBeUndefined();
  });
});

describe('set and list', () => {
  const admin: Principal = { userId: 'u-admin', username: 'admin', scopes: new Set(), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };

  beforeEach(async () => {
    await reset();
    await seedRuns();
  });

  it('sets a bucket, keeps the members left out, and audits each change in its transaction', async () => {
    const s = service();
    const first = await s.set({ principal: admin, requestId: 'req-1' }, { toolset: 'web-a', budgetUsdCents: 50, degradedUntil: '2026-11-22T00:00:00Z' });
    expect(first).toMatchObject({ ok: true, month: '2026-11', toolset: 'web-a', budgetUsdCents: 50, spentUsdCents: 35, pctSpent: 70, isDegraded: true, degradedUntil: '2026-11-22T00:00:00.000Z' });
    const second = await s.set({ principal: admin, requestId: 'req-2' }, { toolset: 'web-a', budgetUsdCents: 35 });
    expect(second).toMatchObject({ budgetUsdCents: 35, degradedUntil: '2026-11-22T00:00:00.000Z' });
    const third = await s.set({ principal: admin, requestId: 'req-3' }, { toolset: 'web-a', degradedUntil: null });
    expect(third).toMatchObject({ budgetUsdCents: 35, degradedUntil: null, isDegraded: true });
    const audit = rowsOf<{ target: string; before: unknown; after: unknown; request_id: string }>(
      await database.db.execute(sql`SELECT target, before, after, request_id FROM operator_audit WHERE verb = 'triage.budget-set' AND request_id LIKE 'req-%' ORDER BY seq_no`),
    );
    expect(audit).toEqual([
      { target: 'triage-budget:2026-11:web-a', before: null, after: { budgetUsdCents: 50, degradedUntil: '2026-11-22T00:00:00.000Z' }, request_id: 'req-1' },
      { target: 'triage-budget:2026-11:web-a', before: { budgetUsdCents: 50, degradedUntil: '2026-11-22T00:00:00.000Z' }, after: { budgetUsdCents: 35, degradedUntil: '2026-11-22T00:00:00.000Z' }, request_id: 'req-2' },
      { target: 'triage-budget:2026-11:web-a', before: { budgetUsdCents: 35, degradedUntil: '2026-11-22T00:00:00.000Z' }, after: { budgetUsdCents: 35, degradedUntil: null }, request_id: 'req-3' },
    ]);
    expect((await s.list(admin, undefined)).budgets.map((b) => b.toolset)).toEqual([EMPIRE_BUCKET, 'web-a']);
  });

  it('shows a credential bound to toolsets only its own buckets', async () => {
    await budget('2026-11', 'web-a', 50);
    await budget('2026-11', 'web-b', 50);
    const bound: Principal = { ...admin, toolsets: new Set(['web-b']) };
    expect((await service().list(bound, '2026-11')).budgets.map((b) => b.toolset)).toEqual(['web-b']);
  });
});
