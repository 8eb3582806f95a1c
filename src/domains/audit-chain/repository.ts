import { and, asc, desc, eq, gt, gte, lt, lte, type SQL, sql } from 'drizzle-orm';
import type { AuditFactRow } from '../../platform/audit/repository.ts';
import type { Frontier, NodeRef } from '../../platform/audit/merkle.ts';
import { nodeKey } from '../../platform/audit/merkle.ts';
import { auditChainHead, auditFacts } from '../../platform/audit/schema.ts';
import { type Db, rowsOf } from '../../platform/db/client.ts';
import { executePrepared } from '../../platform/db/prepared.ts';

/** Reads of the audit chain and its Merkle nodes (the tables belong to platform/audit, which appends). */

export type FactRow = AuditFactRow;
export type FactSummaryRow = Omit<AuditFactRow, 'payload'>;

export interface HeadRow {
  seqNo: number;
  headHash: string;
  merkleSize: number;
  merkleFrontier: Frontier;
}

const headColumns = {
  seqNo: auditChainHead.seqNo,
  headHash: auditChainHead.headHash,
  merkleSize: auditChainHead.merkleSize,
  merkleFrontier: auditChainHead.merkleFrontier,
};

const summaryColumns = {
  id: auditFacts.id,
  seqNo: auditFacts.seqNo,
  source: auditFacts.source,
  sourceId: auditFacts.sourceId,
  kind: auditFacts.kind,
  actor: auditFacts.actor,
  ts: auditFacts.ts,
  prevHash: auditFacts.prevHash,
  entryHash: auditFacts.entryHash,
};

export async function readHead(db: Db): Promise<HeadRow> {
  const [head] = await db.select(headColumns).from(auditChainHead).where(eq(auditChainHead.id, 1));
  if (!head) throw new Error('audit chain head row is missing; migrations did not run');
  return head;
}

export interface FactFilter {
  actor?: string | undefined;
  kind?: string | undefined;
  source?: string | undefined;
  /** Inclusive, as the stored ISO text (`YYYY-MM-DDTHH:mm:ss.sssZ`, which sorts as time does). */
  since?: string | undefined;
  /** Exclusive, as the stored ISO text. */
  until?: string | undefined;
  beforeSeqNo?: number | undefined;
  limit: number;
}

/** Facts without payload, newest (highest seqNo) first. */
export async function listFacts(db: Db, filter: FactFilter): Promise<FactSummaryRow[]> {
  const conditions: SQL[] = [];
  if (filter.actor !== undefined) conditions.push(eq(auditFacts.actor, filter.actor));
  if (filter.kind !== undefined) conditions.push(eq(auditFacts.kind, filter.kind));
  if (filter.source !== undefined) conditions.push(eq(auditFacts.source, filter.source));
  if (filter.since !== undefined) conditions.push(gte(auditFacts.ts, filter.since));
  if (filter.until !== undefined) conditions.push(lt(auditFacts.ts, filter.until));
  if (filter.beforeSeqNo !== undefined) conditions.push(lt(auditFacts.seqNo, filter.beforeSeqNo));
  return db
    .select(summaryColumns)
    .from(auditFacts)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(auditFacts.seqNo))
    .limit(filter.limit);
}

/** One fact (by id or seqNo) and the chain head, read by one statement (one snapshot). */
export async function factWithHead(db: Db, by: { id: string } | { seqNo: number }): Promise<{ head: HeadRow; fact: FactRow | null }> {
  const on = 'id' in by ? eq(auditFacts.id, by.id) : eq(auditFacts.seqNo, by.seqNo);
  const [row] = await db.select({ head: headColumns, fact: auditFacts }).from(auditChainHead).leftJoin(auditFacts, on).where(eq(auditChainHead.id, 1));
  if (!row) throw new Error('audit chain head row is missing; migrations did not run');
  return { head: row.head, fact: row.fact };
}

/**
 * The stored nodes `refs` names, in one statement: levels ≥ 1 from audit_merkle_nodes by primary
 * key, level 0 (leaf i) as fact i + 1's entryHash. A missing node is missing from the answer.
 */
export async function readNodes(db: Db, refs: readonly NodeRef[]): Promise<Map<string, string>> {
  const inner = refs.filter((r) => r.level > 0);
  const leaves = refs.filter((r) => r.level === 0);
  const result = await executePrepared(
    db,
    'audit_proof_nodes',
    sql`SELECT n.level::int AS level, n.idx::text AS idx, n.hash
          FROM unnest(${`{${inner.map((r) => r.level).join(',')}}`}::smallint[], ${`{${inner.map((r) => r.index).join(',')}}`}::bigint[]) AS want(level, idx)
          JOIN audit_merkle_nodes n ON n.level = want.level AND n.idx = want.idx
        UNION ALL
        SELECT 0, (f.seq_no - 1)::text, f.entry_hash
          FROM audit_facts f
         WHERE f.seq_no = ANY(${`{${leaves.map((r) => r.index + 1).join(',')}}`}::bigint[])`,
  );
  const found = new Map<string, string>();
  for (const row of rowsOf<{ level: number; idx: string; hash: string }>(result)) found.set(nodeKey({ level: Number(row.level), index: Number(row.idx) }), row.hash);
  return found;
}

/** Whole facts after `afterSeqNo` up to `uptoSeqNo`, ascending, at most `limit` (the verify walk). */
export async function factsAscending(db: Db, afterSeqNo: number, uptoSeqNo: number, limit: number): Promise<FactRow[]> {
  return db
    .select()
    .from(auditFacts)
    .where(and(gt(auditFacts.seqNo, afterSeqNo), lte(auditFacts.seqNo, uptoSeqNo)))
    .orderBy(asc(auditFacts.seqNo))
    .limit(limit);
}

/**
 * The stored nodes (level ≥ 1) that leaves [fromLeaf, toLeaf) complete: node (L, i) ends at leaf
 * (i+1)·2^L − 1, so per level i runs from ⌊fromLeaf / 2^L⌋ to ⌊toLeaf / 2^L⌋ − 1: one primary-key
 * range per level, written as constants so that each is an index range scan (a join against a
 * series of levels let the planner scan the whole table instead).
 */
export async function nodesCompletedBy(db: Db, fromLeaf: number, toLeaf: number): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const ranges: SQL[] = [];
  for (let level = 1; 2 ** level <= toLeaf; level++) {
    const lo = Math.floor(fromLeaf / 2 ** level);
    const hi = Math.floor(toLeaf / 2 ** level);
    if (hi > lo) ranges.push(sql`(level = ${sql.raw(String(level))} AND idx >= ${sql.raw(String(lo))} AND idx < ${sql.raw(String(hi))})`);
  }
  if (ranges.length === 0) return found;
  const result = await db.execute(sql`SELECT level::int AS level, idx::text AS idx, hash FROM audit_merkle_nodes WHERE ${sql.join(ranges, sql` OR `)}`);
  for (const row of rowsOf<{ level: number; idx: string; hash: string }>(result)) found.set(nodeKey({ level: Number(row.level), index: Number(row.idx) }), row.hash);
  return found;
}
