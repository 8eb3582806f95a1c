import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { changedAfter } from '../../../platform/db/days.ts';

/**
 * The cost center's daily facts for the analytics warehouse (docs/analytics/README.md): spend per (day,
 * workspace, toolset, region) in exact micro-dollars, and which days changed since a time.
 */

/** The days of records inserted or replaced after `since` (every day with records when null); index cost_records_updated_idx. */
export async function recordDaysUpdatedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT to_char(day, 'YYYY-MM-DD') AS day FROM cost_records WHERE ${changedAfter(sql`updated_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface CostDay {
  day: string;
  workspace: string;
  toolset: string;
  region: string;
  amountMicroUsd: bigint;
  records: bigint;
}

/** Spend and record counts per (day, workspace, toolset, region) for days in [from, to). */
export async function costPerDay(db: Db, from: string, to: string): Promise<CostDay[]> {
  const result = await db.execute(sql`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, workspace, toolset, region, sum(amount_micro_usd)::text AS amount, count(*)::text AS records
    FROM cost_records WHERE day >= ${from}::date AND day < ${to}::date
    GROUP BY 1, 2, 3, 4`);
  return rowsOf<{ day: string; workspace: string; toolset: string; region: string; amount: string; records: string }>(result).map((r) => ({
    day: r.day,
    workspace: r.workspace,
    toolset: r.toolset,
    region: r.region,
    amountMicroUsd: BigInt(r.amount),
    records: BigInt(r.records),
  }));
}
