/**
 * The pure part of the analytics cohorts (docs/analytics/cohorts.md): members, their follow days
 * and today's UTC day in, the retention buckets out. Days are UTC day numbers (days since
 * 1970-01-01, src/platform/days.ts).
 */

/** Buckets of a cohort: day 0 (the anchor day itself) to day 7. */
export const COHORT_DAYS = 8;

/**
 * How a member's follow days count on day k:
 * - `each-day`: retained on day k when a follow day is exactly its anchor day + k (classic
 *   retention: active that day, whatever happened before);
 * - `cumulative`: retained on day k when a follow day is at or before its anchor day + k (the
 *   follow event has happened by the end of that day).
 */
export type FollowMode = 'each-day' | 'cumulative';

export interface CohortMember {
  /** The UTC day of the member's anchor event. */
  anchorDay: number;
  /** The UTC days of its follow events (any order; for `cumulative` the first one is enough). */
  followDays: readonly number[];
}

export interface CohortBucket {
  /** Days after the member's own anchor day (0..7). */
  day: number;
  /** Members whose day anchorDay + day has begun (is today or earlier). */
  eligible: number;
  /** Eligible members that count as retained on that day. */
  retained: number;
  /** retained / eligible, rounded to 4 decimals; 0 when none is eligible. */
  pct: number;
}

/** A fraction rounded to 4 decimals, 0 when the denominator is 0. */
export function fraction(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}

/** Pure: the cohort's size and its COHORT_DAYS buckets, ascending by day, as of UTC day `today`. */
export function cohortBuckets(members: readonly CohortMember[], mode: FollowMode, today: number): { cohortSize: number; buckets: CohortBucket[] } {
  const eligible = new Array<number>(COHORT_DAYS).fill(0);
  const retained = new Array<number>(COHORT_DAYS).fill(0);
  for (const member of members) {
    const follow = new Set(member.followDays);
    const firstFollow = member.followDays.reduce((first, d) => Math.min(first, d), Infinity);
    for (let day = 0; day < COHORT_DAYS; day++) {
      const at = member.anchorDay + day;
      if (at > today) break;
      eligible[day]! += 1;
      if (mode === 'each-day' ? follow.has(at) : firstFollow <= at) retained[day]! += 1;
    }
  }
  return {
    cohortSize: members.length,
    buckets: eligible.map((n, day) => ({ day, eligible: n, retained: retained[day]!, pct: fraction(retained[day]!, n) })),
  };
}
