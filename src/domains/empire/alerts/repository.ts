import { and, asc, eq, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { empireAlertRules } from '../schema.ts';

/** The only SQL of empire alert rules and their evaluation. */

export type RuleRow = typeof empireAlertRules.$inferSelect;
export type RulePatch = Partial<Pick<RuleRow, 'name' | 'enabled' | 'silenceUntil' | 'evaluatedUntil' | 'lastFiredAt'>>;

export async function insertRule(db: Db, row: RuleRow): Promise<void> {
  await db.insert(empireAlertRules).values(row);
}

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

/** Locks one rule for a change (the update endpoint); waits for an evaluation holding it. */
export async function lockRule(db: Db, id: string): Promise<RuleRow | null> {
  const [row] = await db.select().from(empireAlertRules).where(eq(empireAlertRules.id, id)).for('update');
  return row ?? null;
}

/**
 * Locks one enabled rule for evaluation, or returns null when it is disabled, gone, or being
 * evaluated by another run right now (`SKIP LOCKED`: that run owns it; this one moves on).
 */
export async function lockRuleForEvaluation(db: Db, id: string): Promise<RuleRow | null> {
  const [row] = await db
    .select()
    .from(empireAlertRules)
    .where(and(eq(empireAlertRules.id, id), eq(empireAlertRules.enabled, true)))
    .for('update', { skipLocked: true });
  return row ?? null;
}

export async function updateRule(db: Db, id: string, patch: RulePatch): Promise<void> {
  await db.update(empireAlertRules).set(patch).where(eq(empireAlertRules.id, id));
}

export async function listEnabledRuleIds(db: Db): Promise<string[]> {
  const rows = await db
    .select({ id: empireAlertRules.id })
    .from(empireAlertRules)
    .where(eq(empireAlertRules.enabled, true))
    .orderBy(asc(empireAlertRules.createdAt), asc(empireAlertRules.id));
  return rows.map((r) => r.id);
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
