import { desc, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';
import { deleteOlderThan } from '../../../platform/db/retention.ts';
import { triageRuns } from '../schema.ts';
import type { CrossToolsetWindow, HoneypotWindow, ResolvedIncident, RuleExample } from '../agents/types.ts';

/**
 * The triage runs' SQL: the run records, and the windowed reads the agents' snapshots are made of.
 * Those reads go straight to the tables of the empire and honeypot domains, as the graph
 * materialiser's do (docs/triage.md, "What the agents read"): each is bounded by its window on a
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

/** Every honeypot tenant with events in the window: totals, top LIAR fingerprints, LIAR samples. */
export async function honeypotWindows(db: Db, from: Date, to: Date, tops: { fingerprints: number; samples: number }): Promise<Omit<HoneypotWindow, 'tarpitsTriggered'>[]> {
  const window = sql`e.received_at >= ${iso(from)}::timestamptz AND e.received_at < ${iso(to)}::timestamptz`;
  const totals = rowsOf<{ tenant: string; events: number; liar: number }>(
    await db.execute(sql`
      SELECT t.slug AS tenant, count(*)::int AS events, count(*) FILTER (WHERE e.ua_class = 'LIAR')::int AS liar
      FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id WHERE ${window} GROUP BY t.slug`),
  );
  const fingerprints = rowsOf<{ tenant: string; fingerprintId: string; liarEvents: number }>(
    await db.execute(sql`
      SELECT tenant, "fingerprintId", "liarEvents" FROM (
        SELECT t.slug AS tenant, e.fingerprint_id AS "fingerprintId", count(*)::int AS "liarEvents",
          row_number() OVER (PARTITION BY t.slug ORDER BY count(*) DESC, e.fingerprint_id) AS rn
        FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id WHERE ${window} AND e.ua_class = 'LIAR'
        GROUP BY t.slug, e.fingerprint_id) f WHERE rn <= ${tops.fingerprints} ORDER BY tenant, rn`),
  );
  const samples = rowsOf<{ tenant: string; id: string }>(
    await db.execute(sql`
      SELECT tenant, id FROM (
        SELECT t.slug AS tenant, e.id::text AS id, row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.received_at DESC, e.id DESC) AS rn
        FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id WHERE ${window} AND e.ua_class = 'LIAR') s
      WHERE rn <= ${tops.samples} ORDER BY tenant, rn`),
  );
  return totals
    .map((r) => ({
      tenant: r.tenant,
      events: num(r.events),
      liarEvents: num(r.liar),
      topLiarFingerprints: fingerprints.filter((f) => f.tenant === r.tenant).map((f) => ({ fingerprintId: f.fingerprintId, liarEvents: num(f.liarEvents) })),
      sampleLiarEventIds: samples.filter((s) => s.tenant === r.tenant).map((s) => s.id),
    }))
    .sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
}

/** Tarpits triggered in the window, newest first. */
export async function tarpitsTriggered(db: Db, from: Date, to: Date): Promise<({ tenant: string } & HoneypotWindow['tarpitsTriggered'][number])[]> {
  const result = await db.execute(sql`
    SELECT t.slug AS tenant, p.fingerprint_id AS "fingerprintId", p.triggered_at AS "triggeredAt", p.liar_event_count AS "liarEventCount"
    FROM honeypot_tarpits p JOIN honeypot_tenants t ON t.id = p.tenant_id
    WHERE p.triggered_at >= ${iso(from)}::timestamptz AND p.triggered_at < ${iso(to)}::timestamptz
    ORDER BY p.triggered_at DESC, p.fingerprint_id`);
  return rowsOf<{ tenant: string; fingerprintId: string; triggeredAt: Date | string; liarEventCount: number }>(result).map((r) => ({
    tenant: r.tenant,
    fingerprintId: r.fingerprintId,
    triggeredAt: new Date(r.triggeredAt).toISOString(),
    liarEventCount: num(r.liarEventCount),
  }));
}

/** Honeypot fingerprint clusters of the window (ja4, uaClass, asn, tenant), most events first. */
export async function honeypotClusters(db: Db, from: Date, to: Date, limit: number, perCluster: number) {
  const result = await db.execute(sql`
    WITH w AS (SELECT e.id, e.ja4, e.ua_class, e.asn, e.fingerprint_id, e.received_at, t.slug AS tenant
      FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
      WHERE e.received_at >= ${iso(from)}::timestamptz AND e.received_at < ${iso(to)}::timestamptz),
    c AS (SELECT ja4, ua_class, asn, tenant, count(*)::int AS events, count(DISTINCT fingerprint_id)::int AS fingerprints FROM w
      GROUP BY ja4, ua_class, asn, tenant ORDER BY events DESC, tenant, ua_class, ja4 NULLS FIRST, asn NULLS FIRST LIMIT ${limit})
    SELECT c.ja4, c.ua_class AS "uaClass", c.asn, c.tenant, c.events, c.fingerprints,
      (SELECT array_agg(id::text ORDER BY received_at DESC, id DESC) FROM (SELECT id, received_at FROM w
        WHERE w.tenant = c.tenant AND w.ua_class = c.ua_class AND w.ja4 IS NOT DISTINCT FROM c.ja4 AND w.asn IS NOT DISTINCT FROM c.asn
        ORDER BY received_at DESC, id DESC LIMIT ${perCluster}) s) AS "sampleEventIds"
    FROM c ORDER BY c.events DESC, c.tenant, c.ua_class, c.ja4 NULLS FIRST, c.asn NULLS FIRST`);
  return rowsOf<{ ja4: string | null; uaClass: string; asn: number | string | null; tenant: string; events: number; fingerprints: number; sampleEventIds: string[] | null }>(result).map((r) => ({
    ja4: r.ja4,
    uaClass: r.uaClass,
    asn: r.asn === null ? null : num(r.asn),
    tenant: r.tenant,
    events: num(r.events),
    fingerprints: num(r.fingerprints),
    sampleEventIds: [...(r.sampleEventIds ?? [])],
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

/** Honeypot events by id (the postmortem's lineage of a liar-flood incident). */
export async function honeypotEventsById(db: Db, ids: readonly string[]): Promise<{ eventId: string; tenant: string; uaClass: string; ts: Date }[]> {
  const uuids = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  if (uuids.length === 0) return [];
  const result = await db.execute(sql`
    SELECT e.id::text AS "eventId", t.slug AS tenant, e.ua_class AS "uaClass", e.ts FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
    WHERE e.id IN (${sql.join(uuids.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return rowsOf<{ eventId: string; tenant: string; uaClass: string; ts: Date | string }>(result).map((r) => ({ ...r, ts: new Date(r.ts) }));
}

/** Deletes the runs started before `cutoff` (in batches); their proposals stay. */
export const deleteRunsBefore = (db: Db, cutoff: Date) => deleteOlderThan(db, { table: triageRuns, id: triageRuns.id, time: triageRuns.startedAt }, cutoff);
