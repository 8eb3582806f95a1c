import { and, asc, count, desc, eq, gt, gte, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import type { Frontier, StoredNode } from './merkle.ts';
import { auditChainHead, auditFacts, auditMerkleNodes, operatorAudit } from './schema.ts';

export type OperatorAuditRow = typeof operatorAudit.$inferSelect;
export type AuditFactRow = typeof auditFacts.$inferSelect;

export interface LockedHead {
  seqNo: number;
  headHash: string;
  /** Leaves the stored Merkle nodes cover (facts 1..merkleSize). */
  merkleSize: number;
  merkleFrontier: Frontier;
}

/** Locks the chain head for the rest of the transaction and returns it. */
export async function lockChainHead(tx: Db): Promise<LockedHead> {
  const [head] = await tx
    .select({
      seqNo: auditChainHead.seqNo,
      headHash: auditChainHead.headHash,
      merkleSize: auditChainHead.merkleSize,
      merkleFrontier: auditChainHead.merkleFrontier,
    })
    .from(auditChainHead)
    .where(eq(auditChainHead.id, 1))
    .for('update');
  if (!head) throw new Error('audit chain head row is missing; migrations did not run');
  return head;
}

/**
 * Inserts the fact and moves the head to it; with `merkle`, also stores the nodes the fact
 * completes and the tree's new size and frontier (all in the caller's transaction).
 */
export async function insertFactAndMoveHead(
  tx: Db,
  fact: AuditFactRow,
  at: Date,
  merkle: { size: number; frontier: Frontier; completed: readonly StoredNode[] } | null = null,
): Promise<void> {
  // A JSON null payload is stored as jsonb 'null' (the driver would send SQL NULL, which the column refuses).
  await tx.insert(auditFacts).values({ ...fact, payload: fact.payload === null ? sql`'null'::jsonb` : fact.payload });
  if (merkle && merkle.completed.length > 0) await insertMerkleNodes(tx, merkle.completed);
  await tx
    .update(auditChainHead)
    .set({
      seqNo: fact.seqNo,
      headHash: fact.entryHash,
      updatedAt: at,
      ...(merkle ? { merkleSize: merkle.size, merkleFrontier: merkle.frontier } : {}),
    })
    .where(eq(auditChainHead.id, 1));
}

/** Stores completed Merkle nodes; a node already stored is left as it is (verify compares them). */
export async function insertMerkleNodes(tx: Db, nodes: readonly StoredNode[]): Promise<void> {
  for (let i = 0; i < nodes.length; i += 5000) {
    await tx
      .insert(auditMerkleNodes)
      .values(nodes.slice(i, i + 5000).map((n) => ({ level: n.level, idx: n.index, hash: n.hash })))
      .onConflictDoNothing();
  }
}

/** Moves the Merkle tree's size and frontier (the catch-up, under the head lock). */
export async function setMerkleEdge(tx: Db, size: number, frontier: Frontier): Promise<void> {
  await tx.update(auditChainHead).set({ merkleSize: size, merkleFrontier: frontier }).where(eq(auditChainHead.id, 1));
}

/** The seqNo and stored entryHash of facts after `afterSeqNo` up to `uptoSeqNo`, ascending, at most `limit`. */
export async function entryHashesAfter(db: Db, afterSeqNo: number, uptoSeqNo: number, limit: number): Promise<{ seqNo: number; entryHash: string }[]> {
  return db
    .select({ seqNo: auditFacts.seqNo, entryHash: auditFacts.entryHash })
    .from(auditFacts)
    .where(and(gt(auditFacts.seqNo, afterSeqNo), lte(auditFacts.seqNo, uptoSeqNo)))
    .orderBy(asc(auditFacts.seqNo))
    .limit(limit);
}

export async function insertOperatorAudit(tx: Db, row: OperatorAuditRow): Promise<void> {
  await tx.insert(operatorAudit).values(row);
}

export async function listOperatorAudit(
  db: Db,
  filter: { limit: number; beforeSeqNo?: number | undefined; verb?: string | undefined },
): Promise<OperatorAuditRow[]> {
  const conditions = [];
  if (filter.beforeSeqNo !== undefined) conditions.push(lt(operatorAudit.seqNo, filter.beforeSeqNo));
  if (filter.verb !== undefined) conditions.push(eq(operatorAudit.verb, filter.verb));
  return db
    .select()
    .from(operatorAudit)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(desc(operatorAudit.seqNo))
    .limit(filter.limit);
}

/** Facts in ascending seqNo order, for verification walks and tests. */
export async function listFactsAscending(db: Db): Promise<AuditFactRow[]> {
  return db.select().from(auditFacts).orderBy(auditFacts.seqNo);
}

/** The chain head's seqNo without locking it (0 before the first fact). */
export async function chainHeadSeqNo(db: Db): Promise<number> {
  const [row] = await db.select({ seqNo: auditChainHead.seqNo }).from(auditChainHead).where(eq(auditChainHead.id, 1)).limit(1);
  return Number(row?.seqNo ?? 0);
}

/** Operator audit rows written at or after `since` (the trust snapshot's recentAudits24h). */
export async function countOperatorAuditSince(db: Db, since: Date): Promise<number> {
  const [row] = await db.select({ n: count() }).from(operatorAudit).where(gte(operatorAudit.ts, since));
  return Number(row?.n ?? 0);
}
