import { and, desc, eq, gte, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { distinctToolsets } from '../../../platform/db/distinct-toolsets.ts';
import { andToolsetInReach } from '../../../platform/db/reach.ts';
import { empireEvents, empireForecasts } from '../schema.ts';

/** The SQL of the forecaster: hourly event counts, and the forecasts of its runs. */

export type ForecastRow = typeof empireForecasts.$inferSelect;

/**
 * Hourly event counts per toolset for [from, to), by event time: `hour` is the bucket's index from
 * `from` (0 = its first hour). Counted by offset from `from`, not by date_trunc, so the session's
 * time zone never moves a bucket. Hours without events are absent.
 */
export async function hourlyCounts(db: Db, from: Date, to: Date, reach: readonly string[] | null = null): Promise<{ toolset: string; hour: number; count: number }[]> {
  const result = await db.execute(sql`
    SELECT toolset, floor(extract(epoch FROM ts - ${from.toISOString()}::timestamptz) / 3600)::int AS hour, count(*)::int AS count FROM empire_events
    WHERE ts >= ${from.toISOString()}::timestamptz AND ts < ${to.toISOString()}::timestamptz ${andToolsetInReach(sql`toolset`, reach)}
    GROUP BY 1, 2`);
  return rowsOf<{ toolset: string; hour: number; count: number }>(result).map((r) => ({ toolset: r.toolset, hour: Number(r.hour), count: Number(r.count) }));
}

/** The toolset's latest scores, newest first. */
export async function recentScores(db: Db, toolset: string, limit: number): Promise<number[]> {
  const rows = await db.select({ score: empireForecasts.score }).from(empireForecasts).where(eq(empireForecasts.toolset, toolset)).orderBy(desc(empireForecasts.computedAt), desc(empireForecasts.id)).limit(limit);
  return rows.map((r) => r.score);
}

export async function insertForecasts(tx: Db, rows: readonly ForecastRow[]): Promise<void> {
  if (rows.length > 0) await tx.insert(empireForecasts).values([...rows]);
}

/**
 * The latest forecast of every toolset. The table keeps every run's rows (a toolset gains 96 a
 * day), so rather than sorting all of them (DISTINCT ON) this skips from toolset to toolset on the
 * (toolset, computed_at) index and reads one row of each.
 */
export async function latestForecasts(db: Db, reach: readonly string[] | null = null): Promise<ForecastRow[]> {
  const result = await db.execute(sql`
    ${distinctToolsets('empire_forecasts')}
    SELECT latest.* FROM toolsets t CROSS JOIN LATERAL (
      SELECT id, run_id AS "runId", toolset, score, level, direction, details, computed_at AS "computedAt" FROM empire_forecasts f
      WHERE f.toolset = t.toolset ORDER BY f.computed_at DESC, f.id DESC LIMIT 1) latest
    WHERE t.toolset IS NOT NULL ${andToolsetInReach(sql`t.toolset`, reach)} ORDER BY latest.toolset`);
  return rowsOf<ForecastRow>(result).map((r) => ({ ...r, score: Number(r.score), computedAt: new Date(r.computedAt) }));
}

/** The newest events of a toolset at or after `since`, for an incident's evidence. */
export async function recentEventIds(db: Db, toolset: string, since: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ eventId: empireEvents.eventId })
    .from(empireEvents)
    .where(and(eq(empireEvents.toolset, toolset), gte(empireEvents.ts, since)))
    .orderBy(desc(empireEvents.ts), desc(empireEvents.eventId))
    .limit(limit);
  return rows.map((r) => r.eventId);
}
