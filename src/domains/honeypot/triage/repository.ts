import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';

/**
 * The honeypot reads the triage agents' snapshots are made of (docs/triage/README.md, "What the
 * agents read"): each bounded by its window on a `received_at` (or `triggered_at`) index, so a pass
 * costs its window, not the history.
 */

const iso = (d: Date) => d.toISOString();
const num = (v: unknown) => Number(v);

/** One tenant's events of a window: totals, top LIAR fingerprints, LIAR samples. */
export interface TenantWindow {
  tenant: string;
  events: number;
  liarEvents: number;
  topLiarFingerprints: { fingerprintId: string; liarEvents: number }[];
  sampleLiarEventIds: string[];
}

export interface TriggeredTarpit {
  tenant: string;
  fingerprintId: string;
  triggeredAt: string;
  liarEventCount: number;
}

/** Every honeypot tenant with events in the window: totals, top LIAR fingerprints, LIAR samples. */
export async function honeypotWindows(db: Db, from: Date, to: Date, tops: { fingerprints: number; samples: number }): Promise<TenantWindow[]> {
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
export async function tarpitsTriggered(db: Db, from: Date, to: Date): Promise<TriggeredTarpit[]> {
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

/** Honeypot events by id (the postmortem's lineage of a liar-flood incident). */
export async function honeypotEventsById(db: Db, ids: readonly string[]): Promise<{ eventId: string; tenant: string; uaClass: string; ts: Date }[]> {
  const uuids = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
  if (uuids.length === 0) return [];
  const result = await db.execute(sql`
    SELECT e.id::text AS "eventId", t.slug AS tenant, e.ua_class AS "uaClass", e.ts FROM honeypot_events e JOIN honeypot_tenants t ON t.id = e.tenant_id
    WHERE e.id IN (${sql.join(uuids.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return rowsOf<{ eventId: string; tenant: string; uaClass: string; ts: Date | string }>(result).map((r) => ({ ...r, ts: new Date(r.ts) }));
}

/** True when `eventId` (a uuid expression) is a honeypot event: a condition triage places in its proposal reads. */
export const isHoneypotEvent = (eventId: SQL): SQL => sql`EXISTS (SELECT 1 FROM honeypot_events h WHERE h.id = ${eventId})`;
