import { bigint, date, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One day's cost of one (toolset, vendor, sku, workspace, region) (spec D6; FOCUS mapping in
 * docs/cost/README.md). Money and quantities are exact integers: `amount_micro_usd` is BilledCost in
 * millionths of a dollar, `units_micro` the consumed quantity in millionths of a unit. `workspace`
 * and `region` are '' when the record names none, so the key stays unique.
 */
export const costRecords = pgTable(
  'cost_records',
  {
    day: date('day', { mode: 'string' }).notNull(),
    toolset: text('toolset').notNull(),
    vendor: text('vendor').notNull(),
    sku: text('sku').notNull(),
    workspace: text('workspace').notNull(),
    region: text('region').notNull(),
    amountMicroUsd: bigint('amount_micro_usd', { mode: 'bigint' }).notNull(),
    unitsMicro: bigint('units_micro', { mode: 'bigint' }).notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  // Both indexes cover the rollups (index-only scans: bench cost-rollup, docs/cost/README.md): migration
  // 0018_cost adds `INCLUDE (...)` by hand, which drizzle-kit cannot declare; keep it when regenerating.
  (t) => [
    // The upsert key, and the rollups' range scan by day; INCLUDE (amount_micro_usd, units_micro).
    uniqueIndex('cost_records_key_idx').on(t.day, t.toolset, t.vendor, t.sku, t.workspace, t.region),
    // The by-toolset series and toolset-filtered rollups; INCLUDE (vendor, sku, workspace, region, amount_micro_usd, units_micro).
    index('cost_records_toolset_day_idx').on(t.toolset, t.day),
    // The analytics rollup finds the days that changed since its last run (docs/analytics/README.md).
    index('cost_records_updated_idx').on(t.updatedAt, t.day),
  ],
);

/** A monthly budget of one scope (spec A "Cost budget"; D6): `empire` (scope key `*`), a toolset or a workspace. */
export const costBudgets = pgTable(
  'cost_budgets',
  {
    id: uuid('id').primaryKey(),
    scope: text('scope').notNull(),
    scopeKey: text('scope_key').notNull(),
    monthlyMicroUsd: bigint('monthly_micro_usd', { mode: 'bigint' }).notNull(),
    alertAtPct: jsonb('alert_at_pct').$type<number[]>().notNull(),
    /** Where fired alerts go (the outbound fan-out); [] sends none. */
    destinations: jsonb('destinations').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('cost_budgets_scope_idx').on(t.scope, t.scopeKey)],
);

/** A threshold a budget's month crossed (spec A "Cost alert" and its state table); one per (budget, month, threshold). */
export const costAlerts = pgTable(
  'cost_alerts',
  {
    id: uuid('id').primaryKey(),
    budgetId: uuid('budget_id').notNull(),
    scope: text('scope').notNull(),
    scopeKey: text('scope_key').notNull(),
    monthBucket: text('month_bucket').notNull(),
    thresholdPct: integer('threshold_pct').notNull(),
    monthlyMicroUsd: bigint('monthly_micro_usd', { mode: 'bigint' }).notNull(),
    observedMicroUsd: bigint('observed_micro_usd', { mode: 'bigint' }).notNull(),
    status: text('status').notNull(),
    firedAt: ts('fired_at').notNull(),
    ackedAt: ts('acked_at'),
    ackedBy: text('acked_by'),
    resolvedAt: ts('resolved_at'),
  },
  (t) => [
    uniqueIndex('cost_alerts_threshold_idx').on(t.budgetId, t.monthBucket, t.thresholdPct),
    index('cost_alerts_status_idx').on(t.status, t.firedAt, t.id),
    index('cost_alerts_fired_idx').on(t.firedAt, t.id),
  ],
);

