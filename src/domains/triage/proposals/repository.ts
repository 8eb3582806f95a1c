import { and, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { olderThan, type TimeCursor } from '../../../platform/db/paging.ts';
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
  /** Only proposals of these toolsets (a credential bound to toolsets); null: all. */
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
    filter.reach === null ? undefined : filter.reach.length === 0 ? sql`false` : inArray(p.toolset, [...filter.reach]),
    filter.cursor === null ? undefined : olderThan(p.createdAt, p.id, filter.cursor),
  ];
  return db.select().from(p).where(and(...conditions)).orderBy(desc(p.createdAt), desc(p.id)).limit(filter.limit);
}

export async function lockProposal(tx: Db, id: string): Promise<ProposalRow | null> {
  const [row] = await tx.select().from(triageProposals).where(eq(triageProposals.id, id)).for('update');
  return row ?? null;
}

export async function proposalById(db: Db, id: string): Promise<ProposalRow | null> {
  const [row] = await db.select().from(triageProposals).where(eq(triageProposals.id, id));
  return row ?? null;
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

