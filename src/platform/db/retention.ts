import { sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { type Db, rowsOf } from './client.ts';

/**
 * Retention of rows that only serve a time window: the ingest samples behind the SLOs, whose
 * longest window is 7 days. Without it they grow by one row per ingest request for ever.
 */

/** SLO samples are kept this long: the longest SLO window (7 days) and a day's margin. */
export const SLO_SAMPLE_RETENTION_MS = 8 * 24 * 3_600_000;
/** Rows one DELETE removes: short statements, so locks and WAL bursts stay small. */
export const PRUNE_BATCH = 10_000;

/** Deletes the rows of `target` whose time is before `cutoff`, `batch` at a time; returns how many. */
export async function deleteOlderThan(db: Db, target: { table: PgTable; id: PgColumn; time: PgColumn }, cutoff: Date, batch = PRUNE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.execute(sql`
      WITH gone AS (
        DELETE FROM ${target.table} WHERE ${target.id} IN (
          SELECT ${target.id} FROM ${target.table} WHERE ${target.time} < ${cutoff.toISOString()}::timestamptz LIMIT ${batch})
        RETURNING 1)
      SELECT count(*)::int AS n FROM gone`);
    const n = Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}
