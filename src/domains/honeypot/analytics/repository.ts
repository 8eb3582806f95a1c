import { sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { changedAfter, utcDayStart, utcDayText } from '../../../platform/db/days.ts';

/**
 * The honeypot's daily facts for the analytics warehouse (docs/analytics/README.md). Days are UTC
 * calendar days as `YYYY-MM-DD`; counts travel as decimal text and come back as bigint.
 */


/** The event-time days of the events received after `since` (every day with events when null). */
export async function eventDaysReceivedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT ${utcDayText(sql`ts`)} AS day FROM honeypot_events WHERE ${changedAfter(sql`received_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface HoneypotEventDay {
  day: string;
  tenant: string;
  events: bigint;
  liarEvents: bigint;
}

/**
 * Events and LIAR events per (day, tenant slug) for event times in [from, to): one range probe
 * per tenant on (tenant_id, ts), so a few days of a large history read only those days.
 */
export async function eventsPerDay(db: Db, from: string, to: string): Promise<HoneypotEventDay[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`e.ts`)} AS day, t.slug AS tenant, count(*)::text AS events, count(*) FILTER (WHERE e.ua_class = 'LIAR')::text AS liars
    FROM honeypot_tenants t
    CROSS JOIN LATERAL (
      SELECT ts, ua_class FROM honeypot_events e
      WHERE e.tenant_id = t.id AND e.ts >= ${utcDayStart(from)} AND e.ts < ${utcDayStart(to)}
    ) e
    GROUP BY 1, 2`);
  return rowsOf<{ day: string; tenant: string; events: string; liars: string }>(result).map((r) => ({
    day: r.day,
    tenant: r.tenant,
    events: BigInt(r.events),
    liarEvents: BigInt(r.liars),
  }));
}

/** The days of tarpits opened after `since` (every day with one when null); a tarpit row is written when it opens. */
export async function tarpitDaysOpenedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT ${utcDayText(sql`triggered_at`)} AS day FROM honeypot_tarpits WHERE ${changedAfter(sql`triggered_at`, since)}`);
  return rowsOf<{ day: string }>(result).map((r) => r.day);
}

export interface HoneypotTarpitDay {
  day: string;
  tenant: string;
  tarpits: bigint;
}

/** Tarpits opened per (day, tenant slug) in [from, to). */
export async function tarpitsPerDay(db: Db, from: string, to: string): Promise<HoneypotTarpitDay[]> {
  const result = await db.execute(sql`
    SELECT ${utcDayText(sql`p.triggered_at`)} AS day, t.slug AS tenant, count(*)::text AS tarpits
    FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id
    WHERE p.triggered_at >= ${utcDayStart(from)} AND p.triggered_at < ${utcDayStart(to)}
    GROUP BY 1, 2`);
  return rowsOf<{ day: string; tenant: string; tarpits: string }>(result).map((r) => ({ day: r.day, tenant: r.tenant, tarpits: BigInt(r.tarpits) }));
}
