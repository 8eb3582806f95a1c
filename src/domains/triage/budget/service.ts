import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { LlmConfig } from '../../../platform/config.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, ServiceError } from '../../../platform/errors.ts';
import { assertToolsetInReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { spendCents } from '../../../platform/llm/prices.ts';
import { isToolsetName } from '../../../platform/toolset-name.ts';
import { type AgentName, DEFERRABLE_AGENTS } from '../agents/registry.ts';
import * as repo from './repository.ts';
import { monthOf, monthRange } from '../../../platform/days.ts';

/**
 * The monthly model budget (spec A "Triage budget row", "Triage budget"; docs/triage/README.md,
 * "Budget"). Spend is never stored: every read sums the month's run token counts per bucket and
 * prices them (platform/llm/prices.ts, overridable by OBSERVATORY_LLM_PRICES). The `*` bucket is
 * the whole empire (every run); a toolset's bucket holds the runs charged to it (postmortems of
 * its incidents). A bucket is degraded when its spend reaches its budget, or while an operator's
 * `degradedUntil` lies ahead; while `*` or the run's own bucket is degraded, the non-safety agents
 * are deferred and the incident classifier still runs.
 */

export const EMPIRE_BUCKET = '*';
export const BUDGET_MAX_CENTS = 1_000_000_000_000;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface BudgetView {
  month: string;
  toolset: string;
  budgetUsdCents: number;
  spentUsdCents: number;
  pctSpent: number;
  isDegraded: boolean;
  degradedUntil: string | null;
}

/** A bucket's figures (pure): a zero budget is spent from the start. */
export function budgetView(input: { month: string; toolset: string; budgetUsdCents: number; spentUsdCents: number; degradedUntil: Date | null }, now: Date): BudgetView {
  const { budgetUsdCents, spentUsdCents, degradedUntil } = input;
  const pctSpent = budgetUsdCents === 0 ? 100 : Math.round((spentUsdCents / budgetUsdCents) * 10_000) / 100;
  return {
    month: input.month,
    toolset: input.toolset,
    budgetUsdCents,
    spentUsdCents,
    pctSpent,
    isDegraded: spentUsdCents >= budgetUsdCents || (degradedUntil !== null && degradedUntil > now),
    degradedUntil: degradedUntil?.toISOString() ?? null,
  };
}

export function createBudgetService(deps: { db: Db; clock: Clock; audit: AuditLog; llm: Pick<LlmConfig, 'prices'>; defaultBudgetUsdCents: number }) {
  const { db, clock, audit } = deps;

  function checkMonth(month: string) {
    if (!MONTH.test(month)) throw badRequest('invalid-month', `month must be YYYY-MM (got ${JSON.stringify(month.slice(0, 20))}).`, { field: 'month' });
  }

  /** Every bucket with a budget this month, and `*` always (with the default budget when none was set). */
  async function bucketsOf(month: string, now: Date, tx: Db = db): Promise<BudgetView[]> {
    const { from, to } = monthRange(month);
    const [rows, usage] = await Promise.all([repo.budgetsOf(tx, month), repo.usage(tx, from, to)]);
    const spentOf = (toolset: string) => spendCents(toolset === EMPIRE_BUCKET ? usage : usage.filter((u) => u.toolset === toolset), deps.llm.prices);
    const buckets = rows.some((r) => r.toolset === EMPIRE_BUCKET)
      ? rows
      : [{ month, toolset: EMPIRE_BUCKET, budgetUsdCents: deps.defaultBudgetUsdCents, degradedUntil: null }, ...rows];
    return buckets
      .map((r) => budgetView({ month, toolset: r.toolset, budgetUsdCents: Number(r.budgetUsdCents), spentUsdCents: spentOf(r.toolset), degradedUntil: r.degradedUntil }, now))
      .sort((a, b) => (a.toolset === b.toolset ? 0 : a.toolset === EMPIRE_BUCKET ? -1 : b.toolset === EMPIRE_BUCKET ? 1 : a.toolset < b.toolset ? -1 : 1));
  }

  /** Why `agent` may not run for `bucket` now, or null. */
  async function deferral(agent: AgentName | 'forecaster', bucket: string, now: Date): Promise<{ bucket: BudgetView; retryAfterSec: number } | null> {
    if (!(DEFERRABLE_AGENTS as readonly string[]).includes(agent)) return null;
    const month = monthOf(now);
    const buckets = await bucketsOf(month, now);
    const nextMonth = monthRange(month).to.getTime();
    // A degraded bucket holds until its month ends (spent) and its degradedUntil passes, whichever is later; the agent waits for the last of them.
    const holds = buckets
      .filter((b) => (b.toolset === EMPIRE_BUCKET || b.toolset === bucket) && b.isDegraded)
      // A month's degradedUntil holds within that month: the next month's buckets are its own.
      .map((b) => ({ bucket: b, until: Math.max(b.spentUsdCents >= b.budgetUsdCents ? nextMonth : 0, b.degradedUntil === null ? 0 : Math.min(Date.parse(b.degradedUntil), nextMonth)) }))
      .sort((a, b) => b.until - a.until);
    const longest = holds[0];
    if (!longest) return null;
    return { bucket: longest.bucket, retryAfterSec: Math.max(1, Math.ceil((longest.until - now.getTime()) / 1000)) };
  }

  return {
    bucketsOf,
    deferral,

    /** Throws 429 `budget-exhausted` (with Retry-After) when the agent is deferred. */
    async assertRuns(agent: AgentName | 'forecaster', bucket: string, now: Date): Promise<void> {
      const deferred = await deferral(agent, bucket, now);
      if (!deferred) return;
      const b = deferred.bucket;
      const why = b.spentUsdCents >= b.budgetUsdCents ? `has spent ${b.spentUsdCents} of ${b.budgetUsdCents} cents` : `is degraded until ${b.degradedUntil}`;
      throw new ServiceError(429, 'budget-exhausted', `The ${b.month} model budget of bucket ${b.toolset} ${why}: the ${agent} is deferred; the incident classifier still runs.`, {
        retryAfterSec: deferred.retryAfterSec,
        month: b.month,
        toolset: b.toolset,
      });
    },

    /** Spec B `GET triage/budget`; a credential bound to toolsets sees its own buckets only. */
    async list(principal: Principal | null, month: string | undefined) {
      const now = clock.now();
      const chosen = month ?? monthOf(now);
      checkMonth(chosen);
      const reach = principal?.toolsets ?? null;
      const budgets = (await bucketsOf(chosen, now)).filter((b) => reach === null || reach.has(b.toolset));
      return { month: chosen, budgets };
    },

    /** Spec B `POST triage/budget`: sets a bucket's budget and `degradedUntil`; members left out keep their value. Audited as `triage.budget-set`. */
    async set(ctx: CallContext, input: { month?: string | undefined; toolset?: string | undefined; budgetUsdCents?: number | undefined; degradedUntil?: string | null | undefined }) {
      const now = clock.now();
      const month = input.month ?? monthOf(now);
      checkMonth(month);
      const toolset = input.toolset ?? EMPIRE_BUCKET;
      if (toolset !== EMPIRE_BUCKET && !isToolsetName(toolset)) {
        throw badRequest('invalid-toolset', `toolset must be * or a toolset name: 3 to 128 characters, a letter, then letters, digits or - (got ${JSON.stringify(toolset.slice(0, 140))}).`, { field: 'body.toolset' });
      }
      if (toolset === EMPIRE_BUCKET) {
        if (ctx.principal.toolsets !== null) throw new ServiceError(403, 'forbidden', 'This token is bound to toolsets and may not set the empire-wide (*) budget.');
      } else assertToolsetInReach(ctx.principal, toolset, 'set the budget of');
      if (input.budgetUsdCents !== undefined && (!Number.isInteger(input.budgetUsdCents) || input.budgetUsdCents < 0 || input.budgetUsdCents > BUDGET_MAX_CENTS)) {
        throw badRequest('invalid-budget', `budgetUsdCents must be a whole number of cents from 0 to ${BUDGET_MAX_CENTS} (got ${input.budgetUsdCents}).`, { field: 'body.budgetUsdCents' });
      }
      let degradedUntil: Date | null | undefined;
      if (typeof input.degradedUntil === 'string') {
        degradedUntil = new Date(input.degradedUntil);
        if (Number.isNaN(degradedUntil.getTime())) throw badRequest('invalid-body', 'degradedUntil must be an ISO 8601 time or null.', { field: 'body.degradedUntil' });
      } else degradedUntil = input.degradedUntil;
      return withTransaction(db, async (tx) => {
        const before = await repo.lockBudget(tx, month, toolset);
        const row: repo.BudgetRow = {
          month,
          toolset,
          budgetUsdCents: input.budgetUsdCents ?? (before ? Number(before.budgetUsdCents) : deps.defaultBudgetUsdCents),
          degradedUntil: degradedUntil === undefined ? (before?.degradedUntil ?? null) : degradedUntil,
          updatedAt: now,
          updatedBy: ctx.principal.userId,
        };
        await repo.upsertBudget(tx, row);
        await audit.record(tx, {
          verb: 'triage.budget-set',
          target: `triage-budget:${month}:${toolset}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: before ? { budgetUsdCents: Number(before.budgetUsdCents), degradedUntil: before.degradedUntil?.toISOString() ?? null } : null,
          after: { budgetUsdCents: row.budgetUsdCents, degradedUntil: row.degradedUntil?.toISOString() ?? null },
          requestId: ctx.requestId,
        });
        const view = (await bucketsOf(month, now, tx)).find((b) => b.toolset === toolset)!;
        return { ok: true as const, ...view };
      });
    },
  };
}

export type BudgetService = ReturnType<typeof createBudgetService>;
