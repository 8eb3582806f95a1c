import { and, asc, eq, gt, lte, sql } from 'drizzle-orm';
import { ruleStoreOf } from '../../../platform/alerting/store.ts';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { honeypotAlertRules, honeypotEvents, honeypotTarpits, honeypotTenants } from '../schema.ts';

/**
 * The SQL of honeypot alert rules beyond the engine's own (platform/alerting/store.ts, over
 * `honeypot_alert_rules`): the listing with each rule's tenant slug, and what the predicates read
 * from the honeypot's events, fingerprints and tarpits.
 */

export const ruleStore = ruleStoreOf(honeypotAlertRules);
export type RuleRow = typeof honeypotAlertRules.$inferSelect;
export type RuleWithTenant = RuleRow & { tenantSlug: string };

const ruleColumns = {
  id: honeypotAlertRules.id,
  tenantId: honeypotAlertRules.tenantId,
  name: honeypotAlertRules.name,
  enabled: honeypotAlertRules.enabled,
  predicate: honeypotAlertRules.predicate,
  destinations: honeypotAlertRules.destinations,
  createdAt: honeypotAlertRules.createdAt,
  lastFiredAt: honeypotAlertRules.lastFiredAt,
  silenceUntil: honeypotAlertRules.silenceUntil,
  evaluatedUntil: honeypotAlertRules.evaluatedUntil,
};

/** Every rule (enabled or not) with its tenant's slug, of one tenant or of all; by slug, then age. */
export async function listRules(db: Db, tenantId: string | null): Promise<RuleWithTenant[]> {
  return db
    .select({ ...ruleColumns, tenantSlug: honeypotTenants.slug })
    .from(honeypotAlertRules)
    .innerJoin(honeypotTenants, eq(honeypotTenants.id, honeypotAlertRules.tenantId))
    .where(tenantId === null ? undefined : eq(honeypotAlertRules.tenantId, tenantId))
    .orderBy(asc(honeypotTenants.slug), asc(honeypotAlertRules.createdAt), asc(honeypotAlertRules.id));
}

// Evaluation reads. Every period is half-open, (after, upTo], on the receive time.

/** Events received in the period (only of `uaClass` when given), and how many of them are LIAR. */
export async function countEvents(
  db: Db,
  args: { tenantId: string; after: Date; upTo: Date; uaClass?: string | undefined },
): Promise<{ events: number; liars: number }> {
  const [row] = await db
    .select({
      events: sql<number>`count(*)::int`,
      liars: sql<number>`(count(*) FILTER (WHERE ${honeypotEvents.uaClass} = 'LIAR'))::int`,
    })
    .from(honeypotEvents)
    .where(
      and(
        eq(honeypotEvents.tenantId, args.tenantId),
        gt(honeypotEvents.receivedAt, args.after),
        lte(honeypotEvents.receivedAt, args.upTo),
        args.uaClass === undefined ? undefined : eq(honeypotEvents.uaClass, args.uaClass),
      ),
    );
  return { events: Number(row?.events ?? 0), liars: Number(row?.liars ?? 0) };
}

export interface NewFingerprint {
  fingerprintId: string;
  ja4: string | null;
  asn: number | null;
  uaClass: string;
  uaSample: string;
  /** Events of the fingerprint received in the period. */
  eventsInPeriod: number;
  /** Events of the fingerprint received up to the end of the period. */
  eventsTotal: number;
}

/**
 * Fingerprints whose `minEvents`-th event was received in the period: fewer than `minEvents`
 * events received up to `after`, at least `minEvents` up to `upTo`. Only the period's events are
 * scanned: the count up to `after` is the fingerprint's running total minus the events received
 * since `after`. The running total counts every stored event except those still pending for the
 * rollup applier, which are added here: the applier deletes a pending row and adds its events to
 * the total in one statement, so one snapshot sees each event exactly once, in one or the other.
 * Returns the first `limit` (most active first) and how many there are.
 */
export async function newFingerprints(
  db: Db,
  args: { tenantId: string; after: Date; upTo: Date; minEvents: number; limit: number },
): Promise<{ total: number; rows: NewFingerprint[] }> {
  const after = args.after.toISOString();
  const upTo = args.upTo.toISOString();
  const result = await db.execute(sql`
    WITH recent AS (
      SELECT fingerprint_id,
             count(*) FILTER (WHERE received_at <= ${upTo}::timestamptz) AS in_period,
             count(*) AS since_after
        FROM honeypot_events
       WHERE tenant_id = ${args.tenantId} AND received_at > ${after}::timestamptz
       GROUP BY fingerprint_id
    ), pending AS (
      SELECT e.fingerprint_id, count(*) AS n
        FROM (SELECT DISTINCT unnest(event_ids) AS id FROM honeypot_rollup_pending) p
        JOIN honeypot_events e ON e.id = p.id AND e.tenant_id = ${args.tenantId}
       GROUP BY e.fingerprint_id
    ), totals AS (
      SELECT r.fingerprint_id, r.in_period, f.fingerprint_id IS NOT NULL AS has_row, f.ja4, f.asn, f.last_ua_class, f.ua_sample,
             coalesce(f.event_count, 0) + coalesce(p.n, 0) - r.since_after AS before_period
        FROM recent r
        LEFT JOIN honeypot_fingerprints f ON f.tenant_id = ${args.tenantId} AND f.fingerprint_id = r.fingerprint_id
        LEFT JOIN pending p ON p.fingerprint_id = r.fingerprint_id
       WHERE r.in_period > 0
    ), crossed AS (
      SELECT t.fingerprint_id, coalesce(t.ja4, e.ja4) AS ja4, coalesce(t.asn, e.asn) AS asn,
             coalesce(t.last_ua_class, e.ua_class) AS last_ua_class, coalesce(t.ua_sample, e.ua_raw) AS ua_sample,
             t.in_period, t.before_period
        FROM (SELECT * FROM totals WHERE before_period < ${args.minEvents} AND before_period + in_period >= ${args.minEvents}) t
        -- A fingerprint whose events are all pending has no row yet: its latest event stands in
        -- (looked up only then, so e is all null beside a row).
        LEFT JOIN LATERAL (SELECT ja4, asn, ua_class, ua_raw FROM honeypot_events x
          WHERE NOT t.has_row AND x.tenant_id = ${args.tenantId} AND x.fingerprint_id = t.fingerprint_id ORDER BY x.ts DESC LIMIT 1) e ON TRUE
    )
    SELECT fingerprint_id, ja4, asn, last_ua_class, ua_sample,
           in_period::int AS in_period, (before_period + in_period)::int AS total_events,
           (count(*) OVER ())::int AS matches
      FROM crossed
     ORDER BY in_period DESC, fingerprint_id
     LIMIT ${args.limit}
  `);
  const rows = rowsOf<{
    fingerprint_id: string;
    ja4: string | null;
    asn: number | null;
    last_ua_class: string;
    ua_sample: string;
    in_period: number;
    total_events: number;
    matches: number;
  }>(result);
  return {
    total: Number(rows[0]?.matches ?? 0),
    rows: rows.map((r) => ({
      fingerprintId: r.fingerprint_id,
      ja4: r.ja4,
      asn: r.asn === null ? null : Number(r.asn),
      uaClass: r.last_ua_class,
      uaSample: r.ua_sample,
      eventsInPeriod: Number(r.in_period),
      eventsTotal: Number(r.total_events),
    })),
  };
}

export interface OpenedTarpit {
  fingerprintId: string;
  triggeredAt: Date;
  expiresAt: Date;
  reason: string;
  liarEventCount: number;
}

/** Tarpits opened (triggeredAt) in the period: the first `limit` and how many there are. */
export async function tarpitsOpened(
  db: Db,
  args: { tenantId: string; after: Date; upTo: Date; limit: number },
): Promise<{ total: number; rows: OpenedTarpit[] }> {
  const rows = await db
    .select({
      fingerprintId: honeypotTarpits.fingerprintId,
      triggeredAt: honeypotTarpits.triggeredAt,
      expiresAt: honeypotTarpits.expiresAt,
      reason: honeypotTarpits.reason,
      liarEventCount: honeypotTarpits.liarEventCount,
      matches: sql<number>`(count(*) OVER ())::int`,
    })
    .from(honeypotTarpits)
    .where(
      and(
        eq(honeypotTarpits.tenantId, args.tenantId),
        gt(honeypotTarpits.triggeredAt, args.after),
        lte(honeypotTarpits.triggeredAt, args.upTo),
      ),
    )
    .orderBy(asc(honeypotTarpits.triggeredAt), asc(honeypotTarpits.fingerprintId))
    .limit(args.limit);
  return {
    total: Number(rows[0]?.matches ?? 0),
    rows: rows.map(({ matches: _, ...row }) => row),
  };
}
