import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';
import type { INCIDENT_SEVERITIES } from '../incidents/service.ts';

/**
 * The empire reads the triage agents' snapshots are made of (docs/triage/README.md, "What the
 * agents read"): each bounded by its window on a `received_at` index (or by a limit), so a pass costs
 * its window, not the history.
 */

const iso = (d: Date) => d.toISOString();
const num = (v: unknown) => Number(v);

/** A source tenant whose window events reached two toolsets or more. */
export interface CrossToolsetWindow {
  tenant: string;
  toolsets: string[];
  events: number;
  sampleEvents: { eventId: string; toolset: string }[];
}

export interface ResolvedIncident {
  id: string;
  toolset: string;
  openedAt: string;
  resolvedAt: string;
  severity: (typeof INCIDENT_SEVERITIES)[number];
}

export async function toolsetTotals(db: Db, from: Date, to: Date): Promise<{ toolset: string; events: number; tenants: number }[]> {
  const result = await db.execute(sql`
    SELECT toolset, count(*)::int AS events, count(DISTINCT tenant)::int AS tenants FROM empire_events
    WHERE received_at >= ${iso(from)}::timestamptz AND received_at < ${iso(to)}::timestamptz GROUP BY toolset`);
  return rowsOf<{ toolset: string; events: number; tenants: number }>(result).map((r) => ({ toolset: r.toolset, events: num(r.events), tenants: num(r.tenants) }));
}

export async function toolsetEventTypes(db: Db, from: Date, to: Date): Promise<{ toolset: string; eventType: string; count: number }[]> {
  const result = await db.execute(sql`
    SELECT toolset, event_type AS "eventType", count(*)::int AS count FROM empire_events
    WHERE received_at >= ${iso(from)}::timestamptz AND received_at < ${iso(to)}::timestamptz GROUP BY toolset, event_type`);
  return rowsOf<{ toolset: string; eventType: string; count: number }>(result).map((r) => ({ ...r, count: num(r.count) }));
}

/** Up to `perGroup` newest event ids of each toolset in the window. */
export async function toolsetSamples(db: Db, from: Date, to: Date, perGroup: number): Promise<{ toolset: string; eventId: string }[]> {
  const result = await db.execute(sql`
    SELECT toolset, event_id::text AS "eventId" FROM (
      SELECT toolset, event_id, row_number() OVER (PARTITION BY toolset ORDER BY received_at DESC, event_id DESC) AS rn FROM empire_events
      WHERE received_at >= ${iso(from)}::timestamptz AND received_at < ${iso(to)}::timestamptz) w
    WHERE rn <= ${perGroup} ORDER BY toolset, rn`);
  return rowsOf<{ toolset: string; eventId: string }>(result);
}

/**
 * Source tenants whose window events reached two toolsets or more, most events first, with up to
 * `perToolset` newest events of each of their toolsets (a proposal cites its own toolset's only).
 */
export async function crossToolsetTenants(db: Db, from: Date, to: Date, limit: number, perToolset: number): Promise<CrossToolsetWindow[]> {
  const result = await db.execute(sql`
    WITH w AS (SELECT tenant, toolset, event_id, received_at FROM empire_events
      WHERE received_at >= ${iso(from)}::timestamptz AND received_at < ${iso(to)}::timestamptz AND tenant IS NOT NULL),
    t AS (SELECT tenant, array_agg(DISTINCT toolset ORDER BY toolset) AS toolsets, count(*)::int AS events FROM w GROUP BY tenant
      HAVING count(DISTINCT toolset) >= 2 ORDER BY events DESC, tenant LIMIT ${limit})
    SELECT t.tenant, t.toolsets, t.events,
      (SELECT json_agg(json_build_object('eventId', s.event_id::text, 'toolset', s.toolset) ORDER BY s.toolset, s.received_at DESC, s.event_id DESC) FROM (
        SELECT toolset, event_id, received_at, row_number() OVER (PARTITION BY toolset ORDER BY received_at DESC, event_id DESC) AS rn
        FROM w WHERE w.tenant = t.tenant) s WHERE s.rn <= ${perToolset}) AS "sampleEvents"
    FROM t ORDER BY t.events DESC, t.tenant`);
  return rowsOf<{ tenant: string; toolsets: string[]; events: number; sampleEvents: { eventId: string; toolset: string }[] | string | null }>(result).map((r) => ({
    tenant: r.tenant,
    toolsets: [...r.toolsets],
    events: num(r.events),
    sampleEvents: (typeof r.sampleEvents === 'string' ? (JSON.parse(r.sampleEvents) as { eventId: string; toolset: string }[]) : (r.sampleEvents ?? [])).map((e) => ({ eventId: e.eventId, toolset: e.toolset })),
  }));
}

/** Incidents not resolved yet, newest first. */
export async function openIncidents(db: Db, limit: number): Promise<{ id: string; toolset: string; title: string; source: string }[]> {
  const result = await db.execute(sql`
    SELECT i.id::text AS id, i.toolset, i.title, i.source FROM empire_incidents i WHERE i.status <> 'resolved' ORDER BY i.opened_at DESC, i.id DESC LIMIT ${limit}`);
  return rowsOf<{ id: string; toolset: string; title: string; source: string }>(result);
}

// The rule proposer's lookback

export async function resolvedIncidents(db: Db, from: Date, to: Date): Promise<ResolvedIncident[]> {
  const result = await db.execute(sql`
    SELECT id::text AS id, toolset, opened_at AS "openedAt", resolved_at AS "resolvedAt", severity FROM empire_incidents
    WHERE status = 'resolved' AND resolved_at IS NOT NULL AND opened_at >= ${iso(from)}::timestamptz AND opened_at < ${iso(to)}::timestamptz
    ORDER BY opened_at, id`);
  return rowsOf<{ id: string; toolset: string; openedAt: Date | string; resolvedAt: Date | string; severity: ResolvedIncident['severity'] }>(result).map((r) => ({
    ...r,
    openedAt: new Date(r.openedAt).toISOString(),
    resolvedAt: new Date(r.resolvedAt).toISOString(),
  }));
}

export async function enabledRulePredicates(db: Db): Promise<{ toolset: string; predicate: Record<string, unknown> }[]> {
  const result = await db.execute(sql`
    SELECT toolset, predicate FROM empire_alert_rules WHERE enabled AND toolset IS NOT NULL ORDER BY toolset, created_at, id`);
  return rowsOf<{ toolset: string; predicate: Record<string, unknown> }>(result);
}

/**
 * Relations and conditions triage places in its own statements, where a join with its proposals
 * has to stay in the database (triage/metrics, triage/proposals).
 */

/** (id, toolset, opened_at) of the incidents opened at or after `since`. */
export const incidentsOpenedSince = (since: Date): SQL =>
  sql`SELECT id, toolset, opened_at FROM empire_incidents WHERE opened_at >= ${iso(since)}::timestamptz`;

/** True when `eventId` (a uuid expression) is an empire event of a toolset outside `reach` (a non-empty binding). */
export const eventOutsideReach = (eventId: SQL, reach: readonly string[]): SQL =>
  sql`EXISTS (SELECT 1 FROM empire_events e WHERE e.event_id = ${eventId} AND NOT ${toolsetInReach(sql`e.toolset`, reach) ?? sql`true`})`;
