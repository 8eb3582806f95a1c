import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { changedAfter, utcDayStart, utcDayText } from '../../../platform/db/days.ts';

/**
 * Triage's daily facts for the analytics warehouse (docs/analytics/README.md): proposals an operator
 * decided (accepted or rejected; automatic rejections are not decisions) per UTC day of the
 * decision and toolset ('' for fleet-wide proposals).
 */

const DECIDED = sql`status IN ('accepted', 'rejected')`;

/** The days of decisions made after `since` (every day with one when null); a decision is final. */
export async function decisionDaysSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT ${utcDayText(sql`decided_at`)} AS day FROM triage_proposals
    WHERE ${DECIDED} AND decided_at IS NOT NULL AND ${changedAfter(sql`decided_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface DecisionDay {
  day: string;
  toolset: string;
  decided: bigint;
  accepted: bigint;
}

/** Decisions per (day, toolset) in [from, to), and how many of them accepted. */
export async function decisionsPerDay(db: Db, from: string, to: string): Promise<DecisionDay[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`decided_at`)} AS day, coalesce(toolset, '') AS toolset,
      count(*)::text AS decided, count(*) FILTER (WHERE status = 'accepted')::text AS accepted
    FROM triage_proposals
    WHERE ${DECIDED} AND decided_at >= ${utcDayStart(from)} AND decided_at < ${utcDayStart(to)}
    GROUP BY 1, 2`);
  return rowsOf<{ day: string; toolset: string; decided: string; accepted: string }>(result).map((r) => ({
    day: r.day,
    toolset: r.toolset,
    decided: BigInt(r.decided),
    accepted: BigInt(r.accepted),
  }));
}
