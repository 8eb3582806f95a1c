import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Config } from '../../../platform/config.ts';
import { canonicalJson } from '../../../platform/crypto.ts';
import { monthOf, monthRange, nextMonth, previousMonth } from '../../../platform/days.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, forbidden, notFound } from '../../../platform/errors.ts';
import { assertToolsetInReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { type Destination, type RedactedDestination, redactDestination, validateDestinations } from '../../../platform/outbound/destinations.ts';
import type { OutboundMessage } from '../../../platform/outbound/message.ts';
import type { Outbound } from '../../../platform/outbound/service.ts';
import { isToolsetName } from '../../../platform/toolset-name.ts';
import type { SpendFilter } from '../records/service.ts';
import * as repo from './repository.ts';
import { formatMicro, MICRO, microToNumber, parseMicro } from '../../../platform/money.ts';
import { percentOf, reaches } from './percent.ts';

/**
 * Cost budgets and cost alerts (spec A "Cost budget", "Cost alert" and its state table; B group 4;
 * C Events 5-6 and Limits; D5 `cost-budget-evaluate`; D6 `POST cost/budgets`). A budget is a
 * monthly amount for one scope with percentage thresholds; the evaluator opens one alert per
 * (budget, month, threshold) crossed, records it as an audit fact and enqueues its notification
 * in the same transaction; operators acknowledge and resolve alerts. Spend comes from the cost
 * records through the `spend` dependency. See docs/cost/alerts.md.
 */

export const BUDGET_SCOPES = ['empire', 'toolset', 'workspace'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
/** The scope key of the one empire-wide budget. */
export const EMPIRE_SCOPE_KEY = '*';
export const ALERT_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];
export const ALERT_LIST_STATUSES = ['acknowledged', 'all', 'open', 'resolved'] as const;
export type AlertListStatus = (typeof ALERT_LIST_STATUSES)[number];
export const THRESHOLD_MIN = 1;
export const THRESHOLD_MAX = 1000;
export const THRESHOLDS_MAX = 20;
/** 10^12 dollars: far above any budget, far below the bigint column's limit in micro-USD. */
export const MONTHLY_USD_MAX = 1_000_000_000_000;
export const ALERT_LIST_DEFAULT = 100;
export const ALERT_LIST_MAX = 500;
export const OUTBOUND_SOURCE = 'cost-alert';
export const JOB_NAME = 'cost-budget-evaluate';
/** Every 15 minutes, UTC. */
export const JOB_SCHEDULE = '*/15 * * * *';
/**
 * For this many days after a month ends the evaluator still evaluates it: cost records arrive
 * late (providers bill a day or more behind), and a threshold the month crossed is still worth an
 * alert of that month.
 */
export const PREVIOUS_MONTH_GRACE_DAYS = 3;
/** Workspace keys: what a cost record's `workspace` may be, save '' (none): 1 to 128 characters without control characters. */
const WORKSPACE_KEY = /^[^\x00-\x1F\x7F]{1,128}$/;

/** Spend of the cost records matching `filter` dated from `from` (inclusive) to `to` (exclusive), both `YYYY-MM-DD`, in micro-USD. */
export type Spend = (filter: SpendFilter, from: string, to: string) => Promise<bigint>;

export interface CostBudgetView {
  id: string;
  scope: BudgetScope;
  scopeKey: string;
  monthlyUsd: number;
  alertAtPct: number[];
  monthBucket: string;
  observedUsd: number;
  observedPct: number;
  crossedThresholds: number[];
  destinations: RedactedDestination[];
  createdAt: string;
  updatedAt: string;
}

export interface CostAlertView {
  id: string;
  budgetId: string;
  scope: BudgetScope;
  scopeKey: string;
  monthBucket: string;
  thresholdPct: number;
  monthlyUsd: number;
  observedUsd: number;
  status: AlertStatus;
  firedAt: string;
  ackedAt: string | null;
  ackedBy: string | null;
  resolvedAt: string | null;
}

// Months (UTC)

/** The days of a month as the spend dependency takes them: `from` inclusive, `to` exclusive. */
export function monthDays(month: string): { from: string; to: string } {
  return { from: `${month}-01`, to: `${nextMonth(month)}-01` };
}

/**
 * The months the evaluator looks at for a budget at `now`: the current month, and the previous
 * one during the first PREVIOUS_MONTH_GRACE_DAYS days of a month if the budget existed before the
 * current month began (a budget set on the 2nd does not judge the month before it existed).
 */
export function monthsToEvaluate(now: Date, budgetCreatedAt: Date): string[] {
  const current = monthOf(now);
  const start = monthRange(current).from;
  const inGrace = now.getTime() < start.getTime() + PREVIOUS_MONTH_GRACE_DAYS * 86_400_000;
  return inGrace && budgetCreatedAt.getTime() < start.getTime() ? [previousMonth(current), current] : [current];
}

// Pure rules

/** The thresholds (ascending) that `observed` reaches of `monthly`. */
export function crossedThresholds(alertAtPct: readonly number[], observed: bigint, monthly: bigint): number[] {
  return [...alertAtPct].sort((a, b) => a - b).filter((t) => reaches(observed, monthly, t));
}

/** The spend filter of a budget's scope. */
export function spendFilterOf(budget: { scope: string; scopeKey: string }): SpendFilter {
  if (budget.scope === 'toolset') return { toolset: budget.scopeKey };
  if (budget.scope === 'workspace') return { workspace: budget.scopeKey };
  return {};
}

export function budgetView(row: repo.BudgetRow, month: string, observed: bigint): CostBudgetView {
  return {
    id: row.id,
    scope: row.scope as BudgetScope,
    scopeKey: row.scopeKey,
    monthlyUsd: microToNumber(row.monthlyMicroUsd),
    alertAtPct: [...row.alertAtPct],
    monthBucket: month,
    observedUsd: microToNumber(observed),
    observedPct: percentOf(observed, row.monthlyMicroUsd),
    crossedThresholds: crossedThresholds(row.alertAtPct, observed, row.monthlyMicroUsd),
    destinations: (row.destinations as Destination[]).map(redactDestination),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A budget's settings as its audit rows record them (no figures: they change without a write). */
function settingsOf(row: repo.BudgetRow) {
  return {
    id: row.id,
    scope: row.scope,
    scopeKey: row.scopeKey,
    monthlyUsd: microToNumber(row.monthlyMicroUsd),
    alertAtPct: [...row.alertAtPct],
    destinations: (row.destinations as Destination[]).map(redactDestination),
  };
}

export function alertView(row: repo.AlertRow): CostAlertView {
  return {
    id: row.id,
    budgetId: row.budgetId,
    scope: row.scope as BudgetScope,
    scopeKey: row.scopeKey,
    monthBucket: row.monthBucket,
    thresholdPct: row.thresholdPct,
    monthlyUsd: microToNumber(row.monthlyMicroUsd),
    observedUsd: microToNumber(row.observedMicroUsd),
    status: row.status as AlertStatus,
    firedAt: row.firedAt.toISOString(),
    ackedAt: row.ackedAt?.toISOString() ?? null,
    ackedBy: row.ackedBy,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}

export type AlertAction = 'ack' | 'resolve';
type AlertState = Pick<repo.AlertRow, 'status' | 'ackedAt' | 'ackedBy' | 'resolvedAt'>;

/**
 * Spec A's state table of a cost alert, exactly; null for a move it does not list (anything on a
 * resolved alert), which the endpoints answer 409:
 *
 * | from | action | to | stamps |
 * |---|---|---|---|
 * | open | ack | acknowledged | ackedAt = now, ackedBy = caller |
 * | acknowledged | ack | acknowledged | ackedAt = now, ackedBy = caller (refreshed) |
 * | open | resolve | resolved | resolvedAt = now, and ackedAt = now, ackedBy = caller |
 * | acknowledged | resolve | resolved | resolvedAt = now (the acknowledgement is kept) |
 */
export function transition(alert: AlertState, action: AlertAction, now: Date, by: string): AlertState | null {
  if (alert.status === 'open' || alert.status === 'acknowledged') {
    if (action === 'ack') return { status: 'acknowledged', ackedAt: now, ackedBy: by, resolvedAt: null };
    if (alert.status === 'open') return { status: 'resolved', ackedAt: now, ackedBy: by, resolvedAt: now };
    return { status: 'resolved', ackedAt: alert.ackedAt, ackedBy: alert.ackedBy, resolvedAt: now };
  }
  return null;
}

function scopeLabel(alert: { scope: string; scopeKey: string }): string {
  return alert.scope === 'empire' ? 'the empire' : `${alert.scope} ${alert.scopeKey}`;
}

/** The notification of a fired alert: a title and sentence for people, `details` for machines. */
export function describeAlert(alert: CostAlertView, row: repo.AlertRow, budget: repo.BudgetRow): Omit<OutboundMessage, 'source' | 'sourceId'> {
  const monthly = formatMicro(row.monthlyMicroUsd);
  const observed = formatMicro(row.observedMicroUsd);
  const pct = percentOf(row.observedMicroUsd, row.monthlyMicroUsd);
  return {
    title: `Cost budget of ${scopeLabel(alert)}: ${alert.thresholdPct}% of ${monthly} USD reached in ${alert.monthBucket}`,
    text:
      `Spend of ${scopeLabel(alert)} in ${alert.monthBucket} is ${observed} USD, ${pct}% of its monthly budget of ${monthly} USD: ` +
      `the ${alert.thresholdPct}% threshold is crossed. Acknowledge or resolve cost alert ${alert.id}.`,
    severity: alert.thresholdPct >= 100 ? 'critical' : 'warning',
    firedAt: alert.firedAt,
    details: {
      alert,
      observedPct: pct,
      budget: { id: budget.id, scope: budget.scope, scopeKey: budget.scopeKey, monthlyUsd: microToNumber(budget.monthlyMicroUsd), alertAtPct: budget.alertAtPct },
    },
  };
}

/**
 * What a budget set without `destinations` notifies: the deployment's notification integrations
 * as configured when it is created (a chat message to OBSERVATORY_CHAT_WEBHOOK_URL, the metrics
 * forwarder), each only when the outbound policy lets it be used. CI dispatch is an action, not a
 * notification, and is never a default.
 */
export function defaultDestinations(config: Pick<Config, 'outbound' | 'integrations'>): Destination[] {
  const candidates: Destination[] = [];
  if (config.integrations.chatWebhookUrl !== null) candidates.push({ kind: 'slack', url: config.integrations.chatWebhookUrl });
  if (config.integrations.metricsForwardUrl !== null) candidates.push({ kind: 'metrics' });
  return candidates.filter((d) => validateDestinations([d], config) === null);
}

/** The caller's reach over budgets and alerts: all of them, or the toolset budgets of a bound token's toolsets. */
function reachOf(principal: Principal | null): repo.Reach {
  return principal?.toolsets ?? null;
}

/** A bound token acts on toolset budgets (and their alerts) of its toolsets only: 403 otherwise. */
function assertScopeInReach(principal: Principal | null, target: { scope: string; scopeKey: string }, action: string): void {
  if (target.scope === 'toolset') return assertToolsetInReach(principal, target.scopeKey, action);
  if (principal !== null && principal.toolsets !== null) {
    throw forbidden(`This token is bound to toolsets and may not ${action} ${target.scope === 'empire' ? 'the empire' : `${target.scope} ${target.scopeKey}`}.`);
  }
}

export interface SetBudgetInput {
  scope: BudgetScope;
  scopeKey: string;
  monthlyUsd: number;
  alertAtPct: number[];
  /** Omitted: the deployment's defaults for a new budget, unchanged for an existing one; [] notifies nobody. */
  destinations?: Destination[] | undefined;
}

export interface EvaluationStats {
  /** Budgets looked at (each for one or two months). */
  budgetsEvaluated: number;
  /** (budget, month) pairs evaluated. */
  monthsEvaluated: number;
  alertsOpened: number;
  /** (budget, month) pairs whose evaluation failed (logged; tried again next run). */
  failed: number;
}

export interface CostBudgetServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  outbound: Outbound;
  config: Pick<Config, 'outbound' | 'integrations'>;
  spend: Spend;
}

export function createCostBudgetService(deps: CostBudgetServiceDeps) {
  const { db, clock, audit, outbound, config, spend } = deps;

  async function figures(row: repo.BudgetRow, month: string): Promise<CostBudgetView> {
    const { from, to } = monthDays(month);
    return budgetView(row, month, await spend(spendFilterOf(row), from, to));
  }

  function checkInput(input: SetBudgetInput): { monthly: bigint; thresholds: number[] } {
    if (!(BUDGET_SCOPES as readonly string[]).includes(input.scope)) {
      throw badRequest('invalid-body', `scope must be one of ${BUDGET_SCOPES.join(', ')}.`, { field: 'body.scope' });
    }
    if (input.scope === 'empire' && input.scopeKey !== EMPIRE_SCOPE_KEY) {
      throw badRequest('invalid-scope-key', `The empire budget's scopeKey is ${EMPIRE_SCOPE_KEY} (got ${JSON.stringify(input.scopeKey.slice(0, 140))}).`, { field: 'body.scopeKey' });
    }
    if (input.scope === 'toolset' && !isToolsetName(input.scopeKey)) {
      throw badRequest('invalid-toolset', `A toolset budget's scopeKey is a toolset name: 3 to 128 characters, a letter, then letters, digits or - (got ${JSON.stringify(input.scopeKey.slice(0, 140))}).`, {
        field: 'body.scopeKey',
      });
    }
    if (input.scope === 'workspace' && !WORKSPACE_KEY.test(input.scopeKey)) {
      throw badRequest('invalid-scope-key', 'A workspace budget\'s scopeKey is a workspace key as cost records name it: 1 to 128 characters without control characters.', {
        field: 'body.scopeKey',
      });
    }
    const monthly = parseMicro(input.monthlyUsd, 'body.monthlyUsd', { min: 1n, max: BigInt(MONTHLY_USD_MAX) * MICRO });
    const t = input.alertAtPct;
    const valid =
      Array.isArray(t) &&
      t.length >= 1 &&
      t.length <= THRESHOLDS_MAX &&
      t.every((p) => Number.isInteger(p) && p >= THRESHOLD_MIN && p <= THRESHOLD_MAX) &&
      new Set(t).size === t.length;
    if (!valid) {
      throw badRequest('invalid-body', `alertAtPct must be 1 to ${THRESHOLDS_MAX} distinct whole percentages from ${THRESHOLD_MIN} to ${THRESHOLD_MAX}.`, { field: 'body.alertAtPct' });
    }
    if (input.destinations !== undefined && input.destinations.length > 0) {
      const unusable = validateDestinations(input.destinations, config);
      if (unusable) throw badRequest('invalid-destinations', `A destination cannot be used: ${unusable}.`, { field: 'body.destinations' });
    }
    return { monthly, thresholds: [...t].sort((a, b) => a - b) };
  }

  /**
   * Evaluates one budget for one month at `observed` spend, in one transaction under the budget's
   * row lock: each threshold crossed without an alert opens one (`ON CONFLICT DO NOTHING`), with
   * its `cost-alert-fired` fact and its deliveries. Returns the alerts opened.
   */
  async function evaluateMonth(budgetId: string, month: string, observed: bigint, now: Date): Promise<number> {
    return withTransaction(db, async (tx) => {
      const budget = await repo.lockBudget(tx, budgetId);
      if (!budget) return 0;
      let opened = 0;
      for (const thresholdPct of crossedThresholds(budget.alertAtPct, observed, budget.monthlyMicroUsd)) {
        const row: repo.AlertRow = {
          id: randomUUID(),
          budgetId: budget.id,
          scope: budget.scope,
          scopeKey: budget.scopeKey,
          monthBucket: month,
          thresholdPct,
          monthlyMicroUsd: budget.monthlyMicroUsd,
          observedMicroUsd: observed,
          status: 'open',
          firedAt: now,
          ackedAt: null,
          ackedBy: null,
          resolvedAt: null,
        };
        if (!(await repo.insertAlertIfAbsent(tx, row))) continue;
        const view = alertView(row);
        await audit.appendFact(tx, { source: 'CostAlert', sourceId: row.id, kind: 'cost-alert-fired', actor: null, payload: view });
        const destinations = budget.destinations as Destination[];
        if (destinations.length > 0) {
          await outbound.enqueue(tx, { source: OUTBOUND_SOURCE, sourceId: row.id, destinations, message: describeAlert(view, row, budget) });
        }
        opened++;
      }
      return opened;
    });
  }

  async function act(ctx: CallContext, id: string, action: AlertAction): Promise<{ ok: true; alert: { id: string; status: AlertStatus } }> {
    return withTransaction(db, async (tx) => {
      const row = await repo.lockAlert(tx, id);
      assertThat(row, notFound(`There is no cost alert ${id}.`));
      assertScopeInReach(ctx.principal, row, action === 'ack' ? 'acknowledge alerts of' : 'resolve alerts of');
      const next = transition(row, action, clock.now(), ctx.principal.username);
      if (next === null) {
        throw conflict(`Cost alert ${id} is ${row.status}; a ${row.status} alert cannot be ${action === 'ack' ? 'acknowledged' : 'resolved'}.`);
      }
      await repo.updateAlert(tx, id, next);
      const view = alertView({ ...row, ...next });
      await audit.appendFact(tx, {
        source: 'CostAlert',
        sourceId: id,
        kind: action === 'ack' ? 'cost-alert-acknowledged' : 'cost-alert-resolved',
        actor: ctx.principal.username,
        payload: view,
      });
      return { ok: true as const, alert: { id, status: view.status } };
    });
  }

  return {
    /** Open alerts at or over `minThresholdPct` of their budget (the compliance predicate cost-overruns-acknowledged). */
    async openOverruns(minThresholdPct: number, listedMax: number) {
      const { count, rows } = await repo.openOverruns(db, minThresholdPct, listedMax);
      return {
        count,
        rows: rows.map((a) => ({ alertId: a.id, scope: a.scope, scopeKey: a.scopeKey, monthBucket: a.monthBucket, thresholdPct: a.thresholdPct, firedAt: a.firedAt.toISOString() })),
      };
    },
    /**
     * `POST {v1}/cost/budgets`: creates or changes the budget of (scope, scopeKey), audited as
     * `cost.budget-set` with before and after (a call that changes nothing writes nothing). Answers
     * the budget with the current month's figures.
     */
    async set(ctx: CallContext, input: SetBudgetInput): Promise<{ ok: true; budget: CostBudgetView }> {
      assertScopeInReach(ctx.principal, input, 'set the budget of');
      const { monthly, thresholds } = checkInput(input);
      const now = clock.now();
      const row = await withTransaction(db, async (tx) => {
        let before = await repo.lockBudgetByScope(tx, input.scope, input.scopeKey);
        if (before === null) {
          const created: repo.BudgetRow = {
            id: randomUUID(),
            scope: input.scope,
            scopeKey: input.scopeKey,
            monthlyMicroUsd: monthly,
            alertAtPct: thresholds,
            destinations: input.destinations ?? defaultDestinations(config),
            createdAt: now,
            updatedAt: now,
          };
          if (await repo.insertBudgetIfAbsent(tx, created)) {
            await audit.record(tx, {
              verb: 'cost.budget-set',
              target: `cost-budget:${created.scope}:${created.scopeKey}`,
              surface: 'api',
              actor: actorOf(ctx.principal),
              before: null,
              after: settingsOf(created),
              requestId: ctx.requestId,
            });
            return created;
          }
          // Another call created it meanwhile (and has committed): change that one.
          before = await repo.lockBudgetByScope(tx, input.scope, input.scopeKey);
          if (before === null) throw new Error(`cost budget ${input.scope}:${input.scopeKey} neither inserted nor found`);
        }
        const destinations = input.destinations ?? (before.destinations as Destination[]);
        // Compared canonically: jsonb hands objects back with its own key order, not the client's.
        const unchanged =
          before.monthlyMicroUsd === monthly &&
          canonicalJson(before.alertAtPct) === canonicalJson(thresholds) &&
          canonicalJson(before.destinations) === canonicalJson(destinations);
        if (unchanged) return before;
        const after: repo.BudgetRow = { ...before, monthlyMicroUsd: monthly, alertAtPct: thresholds, destinations, updatedAt: now };
        await repo.updateBudget(tx, before.id, { monthlyMicroUsd: monthly, alertAtPct: thresholds, destinations, updatedAt: now });
        await audit.record(tx, {
          verb: 'cost.budget-set',
          target: `cost-budget:${after.scope}:${after.scopeKey}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: settingsOf(before),
          after: settingsOf(after),
          requestId: ctx.requestId,
        });
        return after;
      });
      // Figures after the commit: the spend dependency reads through the pool, not the transaction.
      return { ok: true as const, budget: await figures(row, monthOf(now)) };
    },

    /** `GET {v1}/cost/budgets`: the budgets in the caller's reach with the current month's figures. */
    async list(principal: Principal | null): Promise<{ budgets: CostBudgetView[] }> {
      const month = monthOf(clock.now());
      const rows = await repo.listBudgets(db, reachOf(principal));
      const budgets: CostBudgetView[] = [];
      for (const row of rows) budgets.push(await figures(row, month));
      return { budgets };
    },

    /** `GET {v1}/cost/alerts`: alerts in reach newest first, of one status or `all`; `openCount` counts every open one in reach. */
    async listAlerts(
      principal: Principal | null,
      query: { status?: AlertListStatus | undefined; limit?: string | undefined },
    ): Promise<{ status: AlertListStatus; openCount: number; alerts: CostAlertView[] }> {
      // `status` is one of ALERT_LIST_STATUSES: the query schema refuses anything else.
      const status = query.status ?? 'open';
      let limit = ALERT_LIST_DEFAULT;
      if (query.limit !== undefined) {
        limit = /^[0-9]{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
        if (!(limit >= 1 && limit <= ALERT_LIST_MAX)) {
          throw badRequest('invalid-query', `limit must be a whole number from 1 to ${ALERT_LIST_MAX} (got ${JSON.stringify(query.limit.slice(0, 20))}).`, { field: 'query.limit' });
        }
      }
      const reach = reachOf(principal);
      const rows = await repo.listAlerts(db, { status: status === 'all' ? null : status, limit, reach });
      return { status, openCount: await repo.countAlerts(db, 'open', reach), alerts: rows.map(alertView) };
    },

    /** `POST {v1}/cost/alerts/{id}/ack` (state table: open or acknowledged → acknowledged; 409 on a resolved alert). */
    acknowledge: (ctx: CallContext, id: string) => act(ctx, id, 'ack'),

    /** `POST {v1}/cost/alerts/{id}/resolve` (state table: open or acknowledged → resolved; 409 on a resolved alert). */
    resolve: (ctx: CallContext, id: string) => act(ctx, id, 'resolve'),

    /**
     * The `cost-budget-evaluate` job at `now`: every budget, for the months `monthsToEvaluate`
     * names; spend is read first (outside the transaction), then each (budget, month) is evaluated
     * in its own transaction. A failing pair is logged and counted; the others go on.
     */
    async evaluate(now: Date, log?: { error(details: object, message: string): void }): Promise<EvaluationStats> {
      const stats: EvaluationStats = { budgetsEvaluated: 0, monthsEvaluated: 0, alertsOpened: 0, failed: 0 };
      for (const budget of await repo.listBudgets(db)) {
        stats.budgetsEvaluated++;
        for (const month of monthsToEvaluate(now, budget.createdAt)) {
          try {
            const { from, to } = monthDays(month);
            const observed = await spend(spendFilterOf(budget), from, to);
            // Nothing crossed: no transaction, no lock (a concurrent change is seen by the next run).
            if (crossedThresholds(budget.alertAtPct, observed, budget.monthlyMicroUsd).length > 0) {
              stats.alertsOpened += await evaluateMonth(budget.id, month, observed, now);
            }
            stats.monthsEvaluated++;
          } catch (error) {
            log?.error({ err: error, budgetId: budget.id, month }, 'cost budget evaluation failed');
            stats.failed++;
          }
        }
      }
      return stats;
    },
  };
}

export type CostBudgetService = ReturnType<typeof createCostBudgetService>;
