import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';

/**
 * The honeypot's daily facts for the analytics warehouse (docs/analytics.md). Days are UTC
 * calendar days as `YYYY-MM-DD`; counts travel as decimal text and come back as bigint.
 */

const dayOf = (column: SQL) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
const startOf = (day: string) => sql`${`${day}T00:00:00.000Z`}::timestamptz`;

/** The event-time days of the events received after `since` (every day with events when null). */
export async function eventDaysReceivedSince(db: Db, since: Date | null): Promise<string[]> {
  const result = await db.execute(sql`
    SELECT DISTINCT ${dayOf(sql`ts`)} AS day FROM honeypot_events
    ${since === null ? sql`` : sql`WHERE received_at > ${since.toISOString()}::timestamptz`}`);
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
    SELECT ${dayOf(sql`e.ts`)} AS day, t.slug AS tenant, count(*)::text AS events, count(*) FILTER (WHERE e.ua_class = 'LIAR')::text AS liars
    FROM honeypot_tenants t
    CROSS JOIN LATERAL (
      SELECT ts, ua_class FROM honeypot_events e
      WHERE e.tenant_id = t.id AND e.ts >= ${startOf(from)} AND e.ts < ${startOf(to)}
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
    SELECT DISTINCT ${dayOf(sql`triggered_at`)} AS day FROM honeypot_tarpits
    ${since === null ? sql`` : sql`WHERE triggered_at > ${since.toISOString()}::timestamptz`}`);
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
    SELECT ${dayOf(sql`p.triggered_at`)} AS day, t.slug AS tenant, count(*)::text AS tarpits
    FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id
    WHERE p.triggered_at >= ${startOf(from)} AND p.triggered_at < ${startOf(to)}
    GROUP BY 1, 2`);
  return rowsOf<{ day: string; tenant: string; tarpits: string }>(result).map((r) => ({ day: r.day, tenant: r.tenant, tarpits: BigInt(r.tarpits) }));
}
