import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { changedAfter, utcDayStart, utcDayText } from '../../../platform/db/days.ts';
import { distinctToolsets } from '../../../platform/db/distinct-toolsets.ts';

/**
 * The empire's daily facts for the analytics warehouse (docs/analytics/README.md): events per (day,
 * source tenant, toolset), incidents opened and resolved per (day, toolset, severity). Days are UTC
 * calendar days as `YYYY-MM-DD`; sums travel as decimal text and come back as bigint.
 */


/** The event-time days of the events received after `since` (every day with events when null). */
export async function eventDaysReceivedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`SELECT DISTINCT ${utcDayText(sql`ts`)} AS day FROM empire_events WHERE ${changedAfter(sql`received_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface EmpireEventDay {
  day: string;
  /** The source tenant the events name; '' when none. */
  tenant: string;
  toolset: string;
  events: bigint;
}

/** Events per (day, tenant, toolset) for event times in [from, to): one range probe per toolset on (toolset, ts). */
export async function eventsPerDay(db: Db, from: string, to: string): Promise<EmpireEventDay[]> {
  const result = await db.execute(sql`
    ${distinctToolsets('empire_events')}
    SELECT ${utcDayText(sql`e.ts`)} AS day, coalesce(e.tenant, '') AS tenant, t.toolset, count(*)::text AS events
    FROM toolsets t
    CROSS JOIN LATERAL (
      SELECT ts, tenant FROM empire_events e
      WHERE e.toolset = t.toolset AND e.ts >= ${utcDayStart(from)} AND e.ts < ${utcDayStart(to)}
    ) e
    WHERE t.toolset IS NOT NULL
    GROUP BY 1, 2, 3`);
  return rowsOf<{ day: string; tenant: string; toolset: string; events: string }>(result).map((r) => ({ day: r.day, tenant: r.tenant, toolset: r.toolset, events: BigInt(r.events) }));
}

/**
 * The days whose incident facts changed after `since`: the opening day of incidents opened since,
 * and the resolving day of incidents resolved since (resolved is final, so no earlier resolving
 * day ever needs re-rolling). Every day with an incident when `since` is null.
 */
export async function incidentDaysChangedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`opened_at`)} AS day FROM empire_incidents WHERE ${changedAfter(sql`opened_at`, since)}
    UNION
    SELECT ${utcDayText(sql`resolved_at`)} FROM empire_incidents WHERE resolved_at IS NOT NULL AND ${changedAfter(sql`resolved_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface IncidentDay {
  day: string;
  toolset: string;
  severity: string;
  incidents: bigint;
}

/** Incidents opened per (day, toolset, severity) in [from, to). */
export async function incidentsOpenedPerDay(db: Db, from: string, to: string): Promise<IncidentDay[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`opened_at`)} AS day, toolset, severity, count(*)::text AS incidents
    FROM empire_incidents WHERE opened_at >= ${utcDayStart(from)} AND opened_at < ${utcDayStart(to)}
    GROUP BY 1, 2, 3`);
  return rowsOf<{ day: string; toolset: string; severity: string; incidents: string }>(result).map((r) => ({ ...r, incidents: BigInt(r.incidents) }));
}

export interface ResolvedIncidentDay extends IncidentDay {
  /** Total time open of the day's resolved incidents, in microseconds. */
  openMicroSec: bigint;
}

/** Incidents resolved per (day, toolset, severity) in [from, to), with their total time open. */
export async function incidentsResolvedPerDay(db: Db, from: string, to: string): Promise<ResolvedIncidentDay[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`resolved_at`)} AS day, toolset, severity, count(*)::text AS incidents,
      sum(round(extract(epoch FROM resolved_at - opened_at) * 1000000))::bigint::text AS open_micro
    FROM empire_incidents WHERE resolved_at >= ${utcDayStart(from)} AND resolved_at < ${utcDayStart(to)}
    GROUP BY 1, 2, 3`);
  return rowsOf<{ day: string; toolset: string; severity: string; incidents: string; open_micro: string }>(result).map((r) => ({
    day: r.day,
    toolset: r.toolset,
    severity: r.severity,
    incidents: BigInt(r.incidents),
    openMicroSec: BigInt(r.open_micro),
  }));
}
