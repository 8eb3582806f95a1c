import { desc, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { deleteOlderThan } from '../../../platform/db/retention.ts';
import { triageRuns } from '../schema.ts';
import type { CrossToolsetWindow, ResolvedIncident, RuleExample } from '../agents/types.ts';

/**
 * The triage runs' SQL: the run records, and the windowed reads the agents' snapshots are made of.
 * The empire reads still go straight to its tables (docs/triage/README.md, "What the agents read"); the
 * honeypot's are its own (honeypot/triage, through its index.ts). Each is bounded by its window on a
 * `received_at` index, so a pass costs its window, not the history. Every write into those
 * domains goes through their services.
 */

export type RunRow = typeof triageRuns.$inferSelect;

const iso = (d: Date) => d.toISOString();
const num = (v: unknown) => Number(v);

export async function insertRun(tx: Db, row: RunRow): Promise<void> {
  await tx.insert(triageRuns).values(row);
}

export async function runById(db: Db, id: string): Promise<RunRow | null> {
  const [row] = await db.select().from(triageRuns).where(eq(triageRuns.id, id));
  return row ?? null;
}

export async function latestRunOf(db: Db, agent: string): Promise<RunRow | null> {
  const [row] = await db.select().from(triageRuns).where(eq(triageRuns.agent, agent)).orderBy(desc(triageRuns.startedAt)).limit(1);
  return row ?? null;
}

// Window reads (half-open [from, to) by receive time)

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

/** The newest decided rule proposals: at most `each` accepted and `each` rejected. */
export async function ruleExamples(db: Db, each: number): Promise<RuleExample[]> {
  const result = await db.execute(sql`
    SELECT toolset, payload -> 'predicate' AS predicate, status AS decision, decision_notes AS notes FROM (
      SELECT toolset, payload, status, decision_notes, decided_at, id, row_number() OVER (PARTITION BY status ORDER BY decided_at DESC, id DESC) AS rn
      FROM triage_proposals WHERE kind = 'alert-rule' AND status IN ('accepted', 'rejected') AND payload IS NOT NULL) d
    WHERE rn <= ${each} ORDER BY decided_at DESC, id DESC`);
  return rowsOf<RuleExample>(result).map((r) => ({ toolset: r.toolset, predicate: r.predicate, decision: r.decision, notes: r.notes }));
}

export async function enabledRulePredicates(db: Db): Promise<{ toolset: string; predicate: Record<string, unknown> }[]> {
  const result = await db.execute(sql`
    SELECT toolset, predicate FROM empire_alert_rules WHERE enabled AND toolset IS NOT NULL ORDER BY toolset, created_at, id`);
  return rowsOf<{ toolset: string; predicate: Record<string, unknown> }>(result);
}

/** Deletes the runs started before `cutoff` (in batches); their proposals stay. */
export const deleteRunsBefore = (db: Db, cutoff: Date) => deleteOlderThan(db, { table: triageRuns, id: triageRuns.id, time: triageRuns.startedAt }, cutoff);
