import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import type { Dimension } from '../metrics.ts';
import type { FactRow } from './sources.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';

/**
 * The only SQL of the warehouse tables (docs/analytics/README.md): `analytics_daily` and the per-source
 * watermarks in `analytics_sources`. Values and counts travel as decimal text of integers.
 */

/** Rows one INSERT carries: the payload stays a few hundred KB. */
const INSERT_BATCH = 5000;

/** Serialises rollups of one source across runs and instances until the transaction ends. */
export async function lockSource(tx: Db, source: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`analytics-rollup:${source}`}))`);
}

export interface SourceState {
  watermark: Date | null;
}

export async function sourceState(db: Db, source: string): Promise<SourceState | null> {
  const result = await db.execute(sql`SELECT watermark FROM analytics_sources WHERE source = ${source}`);
  const [row] = rowsOf<{ watermark: string | Date | null }>(result);
  if (!row) return null;
  return { watermark: row.watermark === null ? null : new Date(row.watermark) };
}

/** Every source's watermark (a few rows). */
export async function watermarks(db: Db): Promise<Map<string, Date | null>> {
  const rows = rowsOf<{ source: string; watermark: string | Date | null }>(await db.execute(sql`SELECT source, watermark FROM analytics_sources`));
  return new Map(rows.map((r) => [r.source, r.watermark === null ? null : new Date(r.watermark)]));
}

export async function saveSourceState(tx: Db, source: string, watermark: Date, rolledAt: Date, daysRolled: number): Promise<void> {
  await tx.execute(sql`
    INSERT INTO analytics_sources (source, watermark, rolled_at, days_rolled)
    VALUES (${source}, ${watermark.toISOString()}::timestamptz, ${rolledAt.toISOString()}::timestamptz, ${daysRolled})
    ON CONFLICT (source) DO UPDATE SET watermark = EXCLUDED.watermark, rolled_at = EXCLUDED.rolled_at, days_rolled = EXCLUDED.days_rolled`);
}

/**
 * Replaces every row of `metrics` on the days in [from, to) with `rows` (which must all fall in
 * that range and belong to those metrics): a day whose facts vanished loses its rows.
 */
export async function replaceDays(tx: Db, metrics: readonly string[], from: string, to: string, rows: readonly FactRow[], at: Date): Promise<void> {
  await tx.execute(sql`
    DELETE FROM analytics_daily
    WHERE metric IN (${sql.join(metrics.map((m) => sql`${m}`), sql`, `)}) AND day >= ${from}::date AND day < ${to}::date`);
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const payload = JSON.stringify(
      rows.slice(i, i + INSERT_BATCH).map((r) => [r.metric, r.day, r.workspaceId, r.toolset, r.severity, r.region, r.valueMicro.toString(), r.count.toString()]),
    );
    await tx.execute(sql`
      INSERT INTO analytics_daily (metric, day, workspace_id, toolset, severity, region, value_micro, count, rolled_at)
      SELECT v ->> 0, (v ->> 1)::date, v ->> 2, v ->> 3, v ->> 4, v ->> 5, (v ->> 6)::bigint, (v ->> 7)::bigint, ${at.toISOString()}::timestamptz
      FROM jsonb_array_elements(${payload}::jsonb) AS v`);
  }
}

const COLUMN: Record<Dimension, SQL> = {
  workspaceId: sql.raw('workspace_id'),
  toolset: sql.raw('toolset'),
  severity: sql.raw('severity'),
  region: sql.raw('region'),
};

export interface WarehouseQuery {
  metric: string;
  from: string;
  to: string;
  /** The dimensions to group by; the others are summed over. */
  dims: readonly Dimension[];
  /** Exact matches; '' matches rows naming none. */
  filters: Partial<Record<Dimension, string>>;
  /** When set, only rows of these toolsets (a token bound to toolsets). */
  toolsets: readonly string[] | null;
}

/** A row of a query's answer: a fact row without its metric (and '' in the dimensions not grouped by). */
export type WarehouseRow = Omit<FactRow, 'metric'>;

/** The statement `queryDaily` runs (exported so the bench can EXPLAIN exactly it). */
export function queryDailySql(q: WarehouseQuery): SQL {
  const conditions = [sql`metric = ${q.metric}`, sql`day >= ${q.from}::date`, sql`day < ${q.to}::date`];
  for (const [dim, value] of Object.entries(q.filters) as [Dimension, string | undefined][]) {
    if (value !== undefined) conditions.push(sql`${COLUMN[dim]} = ${value}`);
  }
  const reach = toolsetInReach(sql`toolset`, q.toolsets);
  if (reach !== undefined) conditions.push(reach);
  const selected = (dim: Dimension) => (q.dims.includes(dim) ? sql`${COLUMN[dim]}` : sql`''`);
  return sql`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, ${selected('workspaceId')} AS workspace_id, ${selected('toolset')} AS toolset,
      ${selected('severity')} AS severity, ${selected('region')} AS region, sum(value_micro)::text AS value, sum(count)::text AS count
    FROM analytics_daily WHERE ${sql.join(conditions, sql` AND `)}
    GROUP BY ${sql.join([sql`day`, ...q.dims.map((d) => COLUMN[d])], sql`, `)}`;
}

/** Sums per day and requested dimensions, in no particular order (the service sorts). Served by the key: metric, then day. */
export async function queryDaily(db: Db, q: WarehouseQuery): Promise<WarehouseRow[]> {
  const result = await db.execute(queryDailySql(q));
  return rowsOf<{ day: string; workspace_id: string; toolset: string; severity: string; region: string; value: string; count: string }>(result).map((r) => ({
    day: r.day,
    workspaceId: r.workspace_id,
    toolset: r.toolset,
    severity: r.severity,
    region: r.region,
    valueMicro: BigInt(r.value),
    count: BigInt(r.count),
  }));
}
