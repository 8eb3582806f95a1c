import { bigint, date, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The warehouse (docs/analytics/README.md): one metric's value and count on one UTC day for one
 * combination of the dimensions of spec A (`workspace_id`, `toolset`, `severity`, `region`). A
 * dimension the metric does not carry, or a fact that names none, is ''. `value_micro` is the
 * metric's value in millionths (a count metric stores count × 1 000 000), so sums stay exact
 * integers. Written only by the `analytics-rollup` job, which replaces whole days.
 */
export const analyticsDaily = pgTable(
  'analytics_daily',
  {
    metric: text('metric').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    workspaceId: text('workspace_id').notNull(),
    toolset: text('toolset').notNull(),
    severity: text('severity').notNull(),
    region: text('region').notNull(),
    valueMicro: bigint('value_micro', { mode: 'bigint' }).notNull(),
    count: bigint('count', { mode: 'bigint' }).notNull(),
    rolledAt: ts('rolled_at').notNull(),
  },
  // The key serves every query: one metric, a range of days, then the dimensions. Migration
  // 0019_analytics adds `INCLUDE (value_micro, count)` by hand (index-only scans); keep it when regenerating.
  (t) => [primaryKey({ name: 'analytics_daily_pk', columns: [t.metric, t.day, t.workspaceId, t.toolset, t.severity, t.region] })],
);

/**
 * How far the rollup has read each fact source: rows changed after `watermark` (less the
 * documented lag) mark their days for re-rolling on the next run; null until the first run.
 */
export const analyticsSources = pgTable('analytics_sources', {
  source: text('source').primaryKey(),
  watermark: ts('watermark'),
  rolledAt: ts('rolled_at').notNull(),
  daysRolled: integer('days_rolled').notNull(),
});
