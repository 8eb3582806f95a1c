import { and, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../../platform/db/paging.ts';
import { toolsetInReach } from '../../../platform/db/reach.ts';
import { empireTriageFacts } from '../../empire/index.ts';
import { honeypotTriageFacts } from '../../honeypot/index.ts';
import { HONEYPOT_TOOLSET } from '../agents/types.ts';
import { triageProposals } from '../schema.ts';

export type ProposalRow = typeof triageProposals.$inferSelect;

export async function insertProposals(tx: Db, rows: readonly ProposalRow[]): Promise<void> {
  if (rows.length > 0) await tx.insert(triageProposals).values([...rows]);
}

/** The dedupe keys among `keys` that a pending proposal holds. */
export async function pendingKeys(db: Db, keys: readonly string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .select({ id: triageProposals.id, key: triageProposals.dedupeKey })
    .from(triageProposals)
    .where(and(eq(triageProposals.status, 'pending'), inArray(triageProposals.dedupeKey, [...keys])));
  return new Map(rows.map((r) => [r.key!, r.id]));
}

export interface ProposalFilter {
  kind?: string | undefined;
  /** `all` or undefined: every status. */
  status?: string | undefined;
  toolset?: string | undefined;
  /** Only proposals of these toolsets citing only their events (a credential bound to toolsets); null: all. */
  reach: readonly string[] | null;
  cursor: TimeCursor | null;
  limit: number;
}

export async function listProposals(db: Db, filter: ProposalFilter): Promise<ProposalRow[]> {
  const p = triageProposals;
  const conditions: (SQL | undefined)[] = [
    filter.kind === undefined ? undefined : eq(p.kind, filter.kind),
    filter.status === undefined || filter.status === 'all' ? undefined : eq(p.status, filter.status),
    filter.toolset === undefined ? undefined : eq(p.toolset, filter.toolset),
    filter.reach === null ? undefined : withinReach(filter.reach),
    filter.cursor === null ? undefined : olderThan(p.createdAt, p.id, filter.cursor),
  ];
  return db.select().from(p).where(and(...conditions)).orderBy(desc(p.createdAt), desc(p.id)).limit(filter.limit);
}

/** The proposal, locked; null when there is none, or none within `reach` (null: every toolset). */
export async function lockProposal(tx: Db, id: string, reach: readonly string[] | null): Promise<ProposalRow | null> {
  const [row] = await tx.select().from(triageProposals).where(and(eq(triageProposals.id, id), reach === null ? undefined : withinReach(reach))).for('update');
  return row ?? null;
}

/** The proposal; null when there is none, or none within `reach` (null: every toolset). */
export async function proposalById(db: Db, id: string, reach: readonly string[] | null): Promise<ProposalRow | null> {
  const [row] = await db.select().from(triageProposals).where(and(eq(triageProposals.id, id), reach === null ? undefined : withinReach(reach)));
  return row ?? null;
}

const UUID_TEXT = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * A proposal within the reach of a credential bound to `reach` (docs/operations.md, "Toolset
 * binding"): of one of those toolsets, and citing no event of another (honeypot events count as
 * toolset `honeypot`; the empire and the honeypot give the conditions on their events). The checks keep a proposal from citing other toolsets' events, so the
 * second half holds for every proposal made since; it is read from the events themselves so that
 * it holds for any row. Each cited id is one primary-key probe.
 */
function withinReach(reach: readonly string[]): SQL {
  if (reach.length === 0) return sql`false`;
  const p = triageProposals;
  const cited = sql`(CASE WHEN cited.id ~ ${UUID_TEXT} THEN cited.id::uuid END)`;
  const honeypot = reach.includes(HONEYPOT_TOOLSET) ? sql`` : sql` OR ${honeypotTriageFacts.isHoneypotEvent(cited)}`;
  return sql`(${toolsetInReach(p.toolset, reach)} AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(${p.evidenceEventIds}) AS cited(id)
    WHERE ${empireTriageFacts.eventOutsideReach(cited, reach)}${honeypot}))`;
}

export async function recordDecision(
  tx: Db,
  id: string,
  patch: Pick<ProposalRow, 'status' | 'decidedAt' | 'decidedBy' | 'decisionNotes' | 'openedIncidentId' | 'createdSavedViewId' | 'createdAlertRuleId'>,
): Promise<void> {
  await tx.update(triageProposals).set(patch).where(eq(triageProposals.id, id));
}

/** Serialises the runs that write proposals, across instances, for the rest of the transaction. */
export async function lockProposalWrites(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('triage-proposals'))`);
}


/** Pending incident proposals: how many, how many created before `overdueBefore`, and the oldest's time (triage_proposals_list_idx). */
export async function pendingIncidentAges(db: Db, overdueBefore: Date): Promise<{ pending: number; overdue: number; oldest: Date | null }> {
  const [row] = await db
    .select({
      pending: sql<number>`count(*)::int`,
      overdue: sql<number>`(count(*) filter (where ${triageProposals.createdAt} < ${overdueBefore.toISOString()}::timestamptz))::int`,
      oldest: sql<string | null>`min(${triageProposals.createdAt})`,
    })
    .from(triageProposals)
    .where(and(eq(triageProposals.kind, 'incident'), eq(triageProposals.status, 'pending')));
  return { pending: Number(row?.pending ?? 0), overdue: Number(row?.overdue ?? 0), oldest: row?.oldest ? new Date(row.oldest) : null };
}
