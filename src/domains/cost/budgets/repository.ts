import { and, asc, count, desc, eq, gte, inArray, type SQL } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { costAlerts, costBudgets } from '../schema.ts';

/** The only SQL of cost budgets and cost alerts (tables in ../schema.ts, migration 0018_cost). */

export type BudgetRow = typeof costBudgets.$inferSelect;
export type BudgetPatch = Partial<Pick<BudgetRow, 'monthlyMicroUsd' | 'alertAtPct' | 'destinations' | 'updatedAt'>>;
export type AlertRow = typeof costAlerts.$inferSelect;
export type AlertPatch = Pick<AlertRow, 'status' | 'ackedAt' | 'ackedBy' | 'resolvedAt'>;

/**
 * Which budgets and alerts a caller sees: every one (null), or only the toolset budgets of these
 * toolsets (a token bound to toolsets).
 */
export type Reach = ReadonlySet<string> | null;

/** Rows of a scope/scopeKey column pair a caller sees: every row (null reach), or its toolsets' toolset rows. */
function inReach(scope: typeof costBudgets.scope | typeof costAlerts.scope, scopeKey: typeof costBudgets.scopeKey | typeof costAlerts.scopeKey, reach: Reach): SQL | undefined {
  if (reach === null) return undefined;
  return and(eq(scope, 'toolset'), inArray(scopeKey, reach.size === 0 ? [''] : [...reach]));
}

const budgetsInReach = (reach: Reach) => inReach(costBudgets.scope, costBudgets.scopeKey, reach);
const alertsInReach = (reach: Reach) => inReach(costAlerts.scope, costAlerts.scopeKey, reach);

/** Locks the budget of a scope for a change (the upsert); null when there is none yet. */
export async function lockBudgetByScope(db: Db, scope: string, scopeKey: string): Promise<BudgetRow | null> {
  const [row] = await db
    .select()
    .from(costBudgets)
    .where(and(eq(costBudgets.scope, scope), eq(costBudgets.scopeKey, scopeKey)))
    .for('update');
  return row ?? null;
}

/**
 * Inserts a budget unless its (scope, scopeKey) exists (the unique index); true when this call
 * inserted it. A concurrent first set of the same scope waits here for the other to commit and
 * then finds the row.
 */
export async function insertBudgetIfAbsent(db: Db, row: BudgetRow): Promise<boolean> {
  const inserted = await db
    .insert(costBudgets)
    .values(row)
    .onConflictDoNothing({ target: [costBudgets.scope, costBudgets.scopeKey] })
    .returning({ id: costBudgets.id });
  return inserted.length > 0;
}

export async function updateBudget(db: Db, id: string, patch: BudgetPatch): Promise<void> {
  await db.update(costBudgets).set(patch).where(eq(costBudgets.id, id));
}

/** Budgets in reach, by scope then scope key. */
export async function listBudgets(db: Db, reach: Reach = null): Promise<BudgetRow[]> {
  return db.select().from(costBudgets).where(budgetsInReach(reach)).orderBy(asc(costBudgets.scope), asc(costBudgets.scopeKey));
}

/**
 * Locks one budget for an evaluation of one month: a second evaluator of the same budget waits
 * here until the first commits, then finds its alerts and inserts nothing.
 */
export async function lockBudget(db: Db, id: string): Promise<BudgetRow | null> {
  const [row] = await db.select().from(costBudgets).where(eq(costBudgets.id, id)).for('update');
  return row ?? null;
}

/**
 * Opens an alert unless one exists for its (budget, month, threshold) (the unique index
 * `cost_alerts_threshold_idx`; `ON CONFLICT DO NOTHING`, so neither a rerun nor a concurrent
 * evaluator can make a second one); true when this call inserted it.
 */
export async function insertAlertIfAbsent(db: Db, row: AlertRow): Promise<boolean> {
  const inserted = await db
    .insert(costAlerts)
    .values(row)
    .onConflictDoNothing({ target: [costAlerts.budgetId, costAlerts.monthBucket, costAlerts.thresholdPct] })
    .returning({ id: costAlerts.id });
  return inserted.length > 0;
}

/** Locks one alert for a transition (ack, resolve): concurrent calls on it run one after the other. */
export async function lockAlert(db: Db, id: string): Promise<AlertRow | null> {
  const [row] = await db.select().from(costAlerts).where(eq(costAlerts.id, id)).for('update');
  return row ?? null;
}

export async function updateAlert(db: Db, id: string, patch: AlertPatch): Promise<void> {
  await db.update(costAlerts).set(patch).where(eq(costAlerts.id, id));
}

/**
 * Alerts in reach, newest first (firedAt, then id, descending), of one status or all. Served by
 * `cost_alerts_status_idx` (status, fired_at, id) and `cost_alerts_fired_idx` (fired_at, id).
 */
export async function listAlerts(db: Db, filter: { status: string | null; limit: number; reach: Reach }): Promise<AlertRow[]> {
  return db
    .select()
    .from(costAlerts)
    .where(and(filter.status === null ? undefined : eq(costAlerts.status, filter.status), alertsInReach(filter.reach)))
    .orderBy(desc(costAlerts.firedAt), desc(costAlerts.id))
    .limit(filter.limit);
}

export async function countAlerts(db: Db, status: string, reach: Reach): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(costAlerts)
    .where(and(eq(costAlerts.status, status), alertsInReach(reach)));
  return Number(row?.n ?? 0);
}

/** Open alerts at or over `minThresholdPct` (oldest first, at most `listedMax`) and their exact count: the compliance predicate cost-overruns-acknowledged. */
export async function openOverruns(db: Db, minThresholdPct: number, listedMax: number): Promise<{ count: number; rows: AlertRow[] }> {
  const where = and(eq(costAlerts.status, 'open'), gte(costAlerts.thresholdPct, minThresholdPct));
  const [counted] = await db.select({ n: count() }).from(costAlerts).where(where);
  const rows = await db.select().from(costAlerts).where(where).orderBy(asc(costAlerts.firedAt), asc(costAlerts.id)).limit(listedMax);
  return { count: Number(counted?.n ?? 0), rows };
}
