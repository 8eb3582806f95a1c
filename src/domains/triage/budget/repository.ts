import { and, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { triageBudgets } from '../schema.ts';

export type BudgetRow = typeof triageBudgets.$inferSelect;

/** Token totals of the runs started in [from, to), per budget bucket and model. */
export async function usage(db: Db, from: Date, to: Date): Promise<{ toolset: string; model: string; promptTokens: number; completionTokens: number }[]> {
  const result = await db.execute(sql`
    SELECT toolset, model, sum(prompt_tokens)::bigint AS "promptTokens", sum(completion_tokens)::bigint AS "completionTokens" FROM triage_runs
    WHERE started_at >= ${from.toISOString()}::timestamptz AND started_at < ${to.toISOString()}::timestamptz GROUP BY toolset, model`);
  return rowsOf<{ toolset: string; model: string; promptTokens: number | string; completionTokens: number | string }>(result).map((r) => ({
    toolset: r.toolset,
    model: r.model,
    promptTokens: Number(r.promptTokens),
    completionTokens: Number(r.completionTokens),
  }));
}

export async function budgetsOf(db: Db, month: string): Promise<BudgetRow[]> {
  return db.select().from(triageBudgets).where(eq(triageBudgets.month, month)).orderBy(triageBudgets.toolset);
}

export async function lockBudget(tx: Db, month: string, toolset: string): Promise<BudgetRow | null> {
  const [row] = await tx.select().from(triageBudgets).where(and(eq(triageBudgets.month, month), eq(triageBudgets.toolset, toolset))).for('update');
  return row ?? null;
}

export async function upsertBudget(tx: Db, row: BudgetRow): Promise<void> {
  await tx
    .insert(triageBudgets)
    .values(row)
    .onConflictDoUpdate({ target: [triageBudgets.month, triageBudgets.toolset], set: { budgetUsdCents: row.budgetUsdCents, degradedUntil: row.degradedUntil, updatedAt: row.updatedAt, updatedBy: row.updatedBy } });
}
