import { and, asc, eq, sql } from 'drizzle-orm';
import { ruleStoreOf } from '../../../platform/alerting/store.ts';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { empireAlertRules } from '../schema.ts';

/**
 * The SQL of empire alert rules beyond the engine's own (platform/alerting/store.ts, over
 * `empire_alert_rules`): the listing of a toolset's rules, and what the predicates read from the
 * toolsets' events.
 */

export const ruleStore = ruleStoreOf(empireAlertRules);
export type RuleRow = typeof empireAlertRules.$inferSelect;

/**
 * Every rule (enabled or not) of one toolset, oldest first; with `tenant`, only the rules made for
 * that tenant. Uses the (toolset, created_at, id) index.
 */
export async function listRules(db: Db, toolset: string, tenant: string | null): Promise<RuleRow[]> {
  return db
    .select()
    .from(empireAlertRules)
    .where(and(eq(empireAlertRules.toolset, toolset), tenant === null ? undefined : eq(empireAlertRules.tenant, tenant)))
    .orderBy(asc(empireAlertRules.createdAt), asc(empireAlertRules.id));
}

// Evaluation reads over empire_events. Every span is half-open, (after, upTo], on the receive
// time, so they go through the (toolset, received_at) index and filter type and tenant there.

export interface EventSpan {
  toolset: string;
  after: Date;
  upTo: Date;
  /** Only events of this type when given. */
  eventType?: string | undefined;
  /** Only events of this source tenant when given. */
  tenant?: string | undefined;
}

/** Events of a toolset received in the span (of `eventType`, of `tenant` when given). */
export async function countEvents(db: Db, span: EventSpan): Promise<number> {
  const result = await db.execute(sql`
    SELECT count(*)::int AS events
      FROM empire_events
     WHERE received_at > ${span.after.toISOString()}::timestamptz AND received_at <= ${span.upTo.toISOString()}::timestamptz
       AND toolset = ${span.toolset}
       ${span.eventType === undefined ? sql`` : sql`AND event_type = ${span.eventType}`}
       ${span.tenant === undefined ? sql`` : sql`AND tenant = ${span.tenant}`}
  `);
  return Number(rowsOf<{ events: number }>(result)[0]?.events ?? 0);
}

export interface JoinedTenant {
  tenant: string;
  /** Events of the tenant in the rule's toolset (of its eventType) received in the span. */
  events: number;
  /** Events of the tenant in the other toolset (of otherEventType) received in the span. */
  otherEvents: number;
}

/**
 * Source tenants (non-null) that have an event in `toolset` (of `eventType`) and one in
 * `otherToolset` (of `otherEventType`), both received in the span; only `tenant` when given.
 * One pass over the span's events of the two toolsets, grouped by tenant; returns the first `limit`
 * (most events first) and how many tenants there are.
 */
export async function joinedTenants(
  db: Db,
  args: {
    toolset: string;
    otherToolset: string;
    after: Date;
    upTo: Date;
    eventType?: string | undefined;
    otherEventType?: string | undefined;
    tenant?: string | undefined;
    limit: number;
  },
): Promise<{ total: number; rows: JoinedTenant[] }> {
  const mine = sql`toolset = ${args.toolset}${args.eventType === undefined ? sql`` : sql` AND event_type = ${args.eventType}`}`;
  const other = sql`toolset = ${args.otherToolset}${args.otherEventType === undefined ? sql`` : sql` AND event_type = ${args.otherEventType}`}`;
  const result = await db.execute(sql`
    WITH sides AS (
      SELECT tenant,
             (count(*) FILTER (WHERE ${mine}))::int AS events,
             (count(*) FILTER (WHERE ${other}))::int AS other_events
        FROM empire_events
       WHERE received_at > ${args.after.toISOString()}::timestamptz AND received_at <= ${args.upTo.toISOString()}::timestamptz
         AND toolset IN (${args.toolset}, ${args.otherToolset})
         AND tenant IS NOT NULL
         ${args.tenant === undefined ? sql`` : sql`AND tenant = ${args.tenant}`}
       GROUP BY tenant
    )
    SELECT tenant, events, other_events, (count(*) OVER ())::int AS matches
      FROM sides
     WHERE events > 0 AND other_events > 0
     ORDER BY events + other_events DESC, tenant
     LIMIT ${args.limit}
  `);
  const rows = rowsOf<{ tenant: string; events: number; other_events: number; matches: number }>(result);
  return {
    total: Number(rows[0]?.matches ?? 0),
    rows: rows.map((r) => ({ tenant: r.tenant, events: Number(r.events), otherEvents: Number(r.other_events) })),
  };
}
