import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { executePrepared } from '../../../platform/db/prepared.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';

/**
 * The only SQL of cost records (docs/cost/README.md). Money and quantities travel as decimal text of
 * integer millionths in both directions (a bigint parameter, a `numeric` sum read back as text),
 * so no value passes through a double on its way.
 */

/** One record as written: the upsert key, and amount and units in millionths. */
export interface CostRecordRow {
  day: string;
  toolset: string;
  vendor: string;
  sku: string;
  workspace: string;
  region: string;
  amountMicroUsd: bigint;
  unitsMicro: bigint;
}

/**
 * Inserts or replaces `rows` (distinct keys: PostgreSQL refuses an ON CONFLICT DO UPDATE that
 * would touch one row twice) in one statement. The rows travel as one jsonb parameter of
 * positional arrays, so the statement text never depends on the batch size and is prepared once
 * per connection. `inserted` counts the keys that were new (a row a statement inserts has xmax 0;
 * one it updated has the updating transaction's id).
 */
export async function upsertRecords(db: Db, rows: readonly CostRecordRow[], at: Date): Promise<{ upserted: number; inserted: number }> {
  const payload = JSON.stringify(rows.map((r) => [r.day, r.toolset, r.vendor, r.sku, r.workspace, r.region, r.amountMicroUsd.toString(), r.unitsMicro.toString()]));
  const result = await executePrepared(
    db,
    'cost_records_upsert',
    sql`WITH up AS (
      INSERT INTO cost_records (day, toolset, vendor, sku, workspace, region, amount_micro_usd, units_micro, updated_at)
      SELECT (v ->> 0)::date, v ->> 1, v ->> 2, v ->> 3, v ->> 4, v ->> 5, (v ->> 6)::bigint, (v ->> 7)::bigint, ${at.toISOString()}::timestamptz
      FROM jsonb_array_elements(${payload}::jsonb) AS v
      ON CONFLICT (day, toolset, vendor, sku, workspace, region)
      DO UPDATE SET amount_micro_usd = EXCLUDED.amount_micro_usd, units_micro = EXCLUDED.units_micro, updated_at = EXCLUDED.updated_at
      RETURNING (xmax = 0) AS inserted
    )
    SELECT count(*)::int AS upserted, count(*) FILTER (WHERE inserted)::int AS inserted FROM up`,
  );
  const [row] = rowsOf<{ upserted: number; inserted: number }>(result);
  return { upserted: Number(row?.upserted ?? 0), inserted: Number(row?.inserted ?? 0) };
}

export type RollupGroup = 'sku' | 'toolset' | 'vendor';

/** Equality filters of a rollup; an absent member filters nothing, '' matches records that name none. */
export interface RecordFilters {
  toolset?: string | undefined;
  vendor?: string | undefined;
  workspace?: string | undefined;
  region?: string | undefined;
  /** Only records of these toolsets (a token bound to toolsets); absent: every toolset. */
  toolsetIn?: readonly string[] | undefined;
}

const GROUP_COLUMN: Record<RollupGroup, SQL> = { sku: sql.raw('sku'), toolset: sql.raw('toolset'), vendor: sql.raw('vendor') };

/** `day` in [from, to) and each given filter. Dates are `YYYY-MM-DD`, checked by the service. */
function whereOf(from: string, to: string, filters: RecordFilters): SQL {
  const conditions = [sql`day >= ${from}::date`, sql`day < ${to}::date`];
  if (filters.toolset !== undefined) conditions.push(sql`toolset = ${filters.toolset}`);
  if (filters.vendor !== undefined) conditions.push(sql`vendor = ${filters.vendor}`);
  if (filters.workspace !== undefined) conditions.push(sql`workspace = ${filters.workspace}`);
  if (filters.region !== undefined) conditions.push(sql`region = ${filters.region}`);
  const reach = toolsetInReach(sql`toolset`, filters.toolsetIn ?? null);
  if (reach !== undefined) conditions.push(reach);
  return sql.join(conditions, sql` AND `);
}

export interface RollupRow {
  key: string;
  amountMicroUsd: bigint;
  unitsMicro: bigint;
  /** Distinct days with at least one record of this key. */
  dayCount: number;
  /** Records summed. */
  records: number;
}

/**
 * The rollup statement: sums per `group` value over the records in [from, to) that pass
 * `filters`, in no particular order (the service sorts, comparing exact amounts). Two levels of
 * GROUP BY rather than count(DISTINCT day): the inner one per (key, day) lets PostgreSQL hash
 * both, where count(DISTINCT) would sort every group's rows. Exported for the bench's EXPLAIN.
 */
export function rollupSql(group: RollupGroup, from: string, to: string, filters: RecordFilters): SQL {
  return sql`
    SELECT key, sum(amount)::text AS amount, sum(units)::text AS units, count(*)::int AS "dayCount", sum(n)::bigint::text AS records
    FROM (
      SELECT ${GROUP_COLUMN[group]} AS key, day, sum(amount_micro_usd) AS amount, sum(units_micro) AS units, count(*) AS n
      FROM cost_records WHERE ${whereOf(from, to, filters)}
      GROUP BY 1, 2
    ) per_day
    GROUP BY key`;
}

export async function rollup(db: Db, group: RollupGroup, from: string, to: string, filters: RecordFilters): Promise<RollupRow[]> {
  const result = await db.execute(rollupSql(group, from, to, filters));
  return rowsOf<{ key: string; amount: string; units: string; dayCount: number; records: string }>(result).map((r) => ({
    key: r.key,
    amountMicroUsd: BigInt(r.amount),
    unitsMicro: BigInt(r.units),
    dayCount: Number(r.dayCount),
    records: Number(r.records),
  }));
}

/** One toolset's amount per day in [from, to), days with records only, ascending. */
export async function dailyAmounts(db: Db, toolset: string, from: string, to: string): Promise<{ day: string; amountMicroUsd: bigint }[]> {
  const result = await db.execute(sql`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(amount_micro_usd)::text AS amount FROM cost_records
    WHERE ${whereOf(from, to, { toolset })}
    GROUP BY day ORDER BY day`);
  return rowsOf<{ day: string; amount: string }>(result).map((r) => ({ day: r.day, amountMicroUsd: BigInt(r.amount) }));
}

/** The exact sum of the amounts in [from, to) passing `filters`; 0 when none. */
export async function totalAmount(db: Db, from: string, to: string, filters: RecordFilters): Promise<bigint> {
  const result = await db.execute(sql`SELECT coalesce(sum(amount_micro_usd), 0)::text AS amount FROM cost_records WHERE ${whereOf(from, to, filters)}`);
  const [row] = rowsOf<{ amount: string }>(result);
  return BigInt(row?.amount ?? '0');
}
